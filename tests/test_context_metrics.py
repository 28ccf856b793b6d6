"""ContextRecall and ContextPrecision (issue 24): hand-worked cases on scripted judges, the
real HTTP path (ChatOpenAI -> LocalOpenAIServer and its toy judge), sharing the reference's
decomposition with FactualCorrectness, panels, quirks, bad input, and the CLI.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage
from langchain_openai import ChatOpenAI
from support import fact_responder, is_reask, local_models, write_models_yaml
from test_cli import clean_env, cli

from langchain_answer_metrics import (
    ContextPrecision,
    ContextRecall,
    ContextRelevance,
    FactualCorrectness,
    Faithfulness,
    InvalidSampleError,
)
from langchain_answer_metrics.cli.command import main
from langchain_answer_metrics.core.result import MetricResult
from langchain_answer_metrics.costs import estimate
from langchain_answer_metrics.judging.judges import Judge
from langchain_answer_metrics.judging.scope import RunScope, run_scope
from langchain_answer_metrics.judging.steps.contexts import ContextVerdict
from langchain_answer_metrics.metrics.context_precision import (
    ContextPrecisionDetails,
    average_precision,
)
from langchain_answer_metrics.metrics.context_recall import ContextRecallDetails
from langchain_answer_metrics.metrics.context_relevance import ContextRelevanceDetails
from langchain_answer_metrics.metrics.registry import METRICS
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer
from langchain_answer_metrics.testing.prompt_reading import schema_name_for_request
from langchain_answer_metrics.testing.quirks import REALISTIC
from langchain_answer_metrics.testing.scripted import Reply, ScriptedChatModel, prompt_section
from langchain_answer_metrics.testing.toy_rag import contexts_of

QUESTION = "When and where was the Eiffel Tower built?"
REFERENCE = "The Eiffel Tower was built in 1889. It stands in Paris. It is made of iron."
REFERENCE_CLAIMS = [
    "The Eiffel Tower was built in 1889.",
    "The Eiffel Tower stands in Paris.",
    "The Eiffel Tower is made of iron.",
]
USEFUL = "The Eiffel Tower was completed in 1889 in Paris."
USELESS = "Lyon has a Roman theatre."
ALSO_USEFUL = "Construction of the tower in Paris ended in 1889."


def context_judge(
    model: str = "judge-a", *, useful: set[str] | None = None, **script: Any
) -> ScriptedChatModel:
    """A fact judge that also says a context is useful when it is in ``useful``."""
    facts = fact_responder(**script)
    chosen = useful if useful is not None else {USEFUL, ALSO_USEFUL}

    def reply(schema: str, messages: list[BaseMessage]) -> Reply:
        if schema != "ContextVerdicts":
            return facts(schema, messages)
        contexts = contexts_of(prompt_section(messages, "source"))
        return {
            "verdicts": [
                {
                    "index": index,
                    "reason": f"judged {context[:10]}",
                    "verdict": "useful" if context in chosen else "not_useful",
                }
                for index, context in enumerate(contexts, 1)
            ]
        }

    return ScriptedChatModel(responder=reply, model=model)


def sample(contexts: list[str], **fields: Any) -> dict[str, Any]:
    return {
        "user_input": QUESTION,
        "reference": REFERENCE,
        "retrieved_contexts": contexts,
        "response": "It was built in 1889 in Paris.",
        **fields,
    }


def local_judge(server: LocalOpenAIServer, model: str = "judge-a", **options: Any) -> ChatOpenAI:
    # A base URL of its own (the server routes by suffix): langchain-openai shares one async
    # client per base URL, which a closed event loop of another test would break.
    return ChatOpenAI(
        model=model,
        base_url=f"{server.url}/{uuid.uuid4().hex[:12]}/v1",
        api_key="sk-test",  # type: ignore[arg-type]
        use_responses_api=False,
        max_retries=0,
        **options,
    )


def requests_by_schema(server: LocalOpenAIServer) -> dict[str, int]:
    counts: dict[str, int] = {}
    for entry in server.requests:
        if entry.path.endswith("/chat/completions"):
            name = schema_name_for_request(entry.body) or "?"
            counts[name] = counts.get(name, 0) + 1
    return counts


# --------------------------------------------------------------------------- the formulas


@pytest.mark.parametrize(
    ("ranking", "expected"),
    [
        ([1, 0, 1], (1 / 1 + 2 / 3) / 2),  # 0.8333
        ([0, 1], 0.5),
        ([0, 0], 0.0),  # nothing useful retrieved: the worst retrieval, not n/a
        ([1, 1, 0], 1.0),  # useful ones first: whatever follows costs nothing
        ([0, 0, 1], 1 / 3),
        ([0, 1, 1], (1 / 2 + 2 / 3) / 2),
        ([1], 1.0),
    ],
)
def test_average_precision_as_ragas_defines_it(ranking: list[int], expected: float) -> None:
    assert average_precision([bool(v) for v in ranking]) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("contexts", "expected", "ranks"),
    [
        ([USEFUL, USELESS, ALSO_USEFUL], 0.8333, [1, 3]),
        ([USELESS, USEFUL], 0.5, [2]),
        ([USELESS, "Rome has the Colosseum."], 0.0, []),
        ([USEFUL, ALSO_USEFUL, USELESS], 1.0, [1, 2]),
    ],
)
def test_context_precision_on_hand_worked_rankings(
    contexts: list[str], expected: float, ranks: list[int]
) -> None:
    judge = context_judge()
    result = ContextPrecision(llm=judge).invoke(sample(contexts))
    assert result.score == pytest.approx(expected, abs=1e-4)
    assert judge.calls_for("ContextVerdicts") == 1 and len(judge.calls) == 1  # one request
    details = result.details
    assert isinstance(details, ContextPrecisionDetails)
    verdicts = details.models["judge-a"].contexts
    assert [v.rank for v in verdicts] == list(range(1, len(contexts) + 1))
    assert [v.context for v in verdicts] == contexts
    assert [v.rank for v in verdicts if v.verdict == "useful"] == ranks
    assert all(v.reason.startswith("judged ") for v in verdicts)
    assert details.models["judge-a"].useful == len(ranks)
    assert f"average precision {expected:.2f}" in result.reason
    if len(ranks) < len(contexts):
        assert "not useful: #" in result.reason and USELESS in result.reason


def test_context_recall_partial_support_2_of_3() -> None:
    # The contexts state the year and the city, not the material.
    judge = context_judge(claims={REFERENCE: REFERENCE_CLAIMS})
    result = ContextRecall(llm=judge).invoke(
        sample(["The Eiffel Tower was built in 1889.", "The Eiffel Tower stands in Paris."])
    )
    assert result.score == pytest.approx(2 / 3, abs=1e-3)
    details = result.details
    assert isinstance(details, ContextRecallDetails)
    model = details.models["judge-a"]
    assert [c.claim for c in model.reference_claims] == REFERENCE_CLAIMS
    assert [c.verdict for c in model.reference_claims] == ["supported", "supported", "neutral"]
    assert all(c.reason.startswith("checked: ") for c in model.reference_claims)
    assert (model.supported, model.total, model.no_claims) == (2, 3, [])
    assert model.claims_by_side() == {"reference": model.reference_claims}
    assert "2 of 3 reference claims" in result.reason and "made of iron" in result.reason
    assert [name for name, _ in judge.calls] == ["ClaimList", "ClaimVerdicts"]


def test_a_reference_with_no_claims_is_not_applicable_and_the_panel_goes_by_the_others() -> None:
    empty = context_judge("judge-a", claims={REFERENCE: []})
    result = ContextRecall(llm=empty).invoke(sample([USEFUL]))
    assert result.score is None and result.not_applicable == "no_claims" and result.band is None
    assert "nothing to recall" in result.reason
    assert empty.calls_for("ClaimVerdicts") == 0  # nothing to verify, nothing sent
    # Not an abstention: the response is not what had no claims.
    from langchain_answer_metrics.run.summary import has_no_claims, summarize

    assert not has_no_claims(result)
    summary = summarize("context_recall", [result])
    assert summary.not_applicable == 1 and summary.no_claims == 0

    finds = context_judge("judge-b", claims={REFERENCE: REFERENCE_CLAIMS[:1]})
    panel = ContextRecall(llm=[context_judge("judge-a", claims={REFERENCE: []}), finds])
    mixed = panel.invoke(sample(["The Eiffel Tower was built in 1889."]))
    assert mixed.score == 1.0 and mixed.per_model == {"judge-b": 1.0}
    assert "n/a (no claims)" in mixed.reason


# --------------------------------------------------------------------------- sharing


def test_with_factual_correctness_in_the_run_no_extra_decomposition_is_sent(
    server: LocalOpenAIServer,
) -> None:
    llm = local_judge(server)
    factual, recall = FactualCorrectness(llm=llm, mode="recall"), ContextRecall(llm=llm)
    data = sample([USEFUL, USELESS])

    async def one_run(*metrics: Any) -> list[MetricResult]:
        with run_scope(RunScope()):
            return list(await asyncio.gather(*(m.ainvoke(data) for m in metrics)))

    async def each_alone_then_together() -> tuple[dict[str, Any], list[MetricResult]]:
        alone = {}
        for metric in (factual, recall):
            server.reset()
            await one_run(metric)
            alone[metric.key] = requests_by_schema(server)
        server.reset()
        return alone, await one_run(factual, recall)

    alone, together = asyncio.run(each_alone_then_together())
    assert alone["factual_correctness"] == {"ClaimList": 1, "ClaimVerdicts": 1}
    assert alone["context_recall"] == {"ClaimList": 1, "ClaimVerdicts": 1}
    # The reference is decomposed once for both; each verifies against its own source.
    assert requests_by_schema(server) == {"ClaimList": 1, "ClaimVerdicts": 2}
    sent = [entry.body for entry in server.requests]
    decompositions = [body for body in sent if schema_name_for_request(body) == "ClaimList"]
    assert REFERENCE in json.dumps(decompositions[0]["messages"], ensure_ascii=False)
    # ... and both scored on the same claims.
    claims = [
        [c.claim for c in result.details.models["judge-a"].reference_claims]  # type: ignore[union-attr]
        for result in together
    ]
    assert claims[0] == claims[1] and claims[0]
    # A shared reply is not counted twice in usage: one of the two spent the decomposition.
    spent = [result.usage["judge-a"].requests for result in together]
    assert sorted(spent) == [1, 2]


def test_the_seven_metric_judge_suite_stays_at_or_under_8_requests_per_sample(
    server: LocalOpenAIServer,
) -> None:
    from langchain_answer_metrics import AnswerCorrectness, AspectCritic
    from langchain_answer_metrics.testing.scripted import ScriptedEmbeddings

    llm, embedder = local_judge(server), ScriptedEmbeddings()
    metrics = [
        FactualCorrectness(llm=llm),
        AnswerCorrectness(llm=llm, embeddings=embedder),
        AspectCritic(llm=llm, criterion="The response gives a year."),
        Faithfulness(llm=llm),
        ContextRecall(llm=llm),
        ContextPrecision(llm=llm),
    ]
    with run_scope(RunScope()):
        asyncio.run(_gather(metrics, sample([USEFUL, USELESS])))
    assert server.chat_requests == 8


async def _gather(metrics: list[Any], data: dict[str, Any]) -> list[Any]:
    return list(await asyncio.gather(*(m.ainvoke(data) for m in metrics)))


# --------------------------------------------------------------------------- HTTP, languages


LANGUAGES = {
    "en": (
        "When was the Eiffel Tower built?",
        "The Eiffel Tower was built in 1889.",
        "The Eiffel Tower was completed in 1889.",
        "Lyon has a Roman theatre.",
    ),
    "ru": (
        "Когда Гагарин полетел в космос?",
        "Юрий Гагарин полетел в космос 12 апреля 1961 года.",
        "12 апреля 1961 года Юрий Гагарин совершил первый полёт в космос.",
        "Байкал — самое глубокое озеро мира.",
    ),
    "zh": (
        "长城有多长？",
        "长城全长21196千米。",
        "据2012年测量，长城全长21196千米。",
        "熊猫生活在四川的山区。",
    ),
}


@pytest.mark.parametrize("language", list(LANGUAGES))
@pytest.mark.parametrize("method", ["function_calling", "json_mode", "json_schema"])
def test_the_toy_judge_over_http_in_every_language(
    server: LocalOpenAIServer, language: str, method: str
) -> None:
    question, reference, useful, useless = LANGUAGES[language]
    judge = Judge(model=local_judge(server), method=method)  # type: ignore[arg-type]
    fields = {"user_input": question, "reference": reference}
    precision = ContextPrecision(llm=judge)
    assert precision.score(**fields, retrieved_contexts=[useful, useless]) == 1.0
    assert precision.score(**fields, retrieved_contexts=[useless, useful]) == 0.5
    assert ContextRecall(llm=judge).score(**fields, retrieved_contexts=[useless, useful]) == 1.0
    assert ContextRecall(llm=judge).score(**fields, retrieved_contexts=[useless]) == 0.0


def test_realistic_quirks_score_as_a_clean_judge_with_as_many_requests() -> None:
    with LocalOpenAIServer(quirks={"judge-real": REALISTIC}) as server:
        data = sample([USELESS, USEFUL, ALSO_USEFUL])
        scores, counts = {}, {}
        for model in ("judge-a", "judge-real"):
            server.reset()
            llm = local_judge(server, model)
            results = [ContextPrecision(llm=llm).invoke(data), ContextRecall(llm=llm).invoke(data)]
            dumps = [r.details.models[model].model_dump() for r in results]  # type: ignore[union-attr]
            taken = [verdict.get("taken_in_order") for verdict in dumps[0]["contexts"]]
            for dump in dumps:  # index_all_one: verdicts taken in order, and said so
                for verdict in dump.get("contexts", []) + dump.get("reference_claims", []):
                    verdict.pop("taken_in_order", None)
            scores[model] = [(r.score, dump) for r, dump in zip(results, dumps)]
            assert taken == ([True] * 3 if model == "judge-real" else [None] * 3)
            counts[model] = server.chat_requests
            if model == "judge-real":
                assert any("think_json" in entry.quirks for entry in server.requests)
    assert scores["judge-a"] == scores["judge-real"] and counts["judge-a"] == counts["judge-real"]
    assert scores["judge-a"][0][0] == pytest.approx((1 / 2 + 2 / 3) / 2)


# --------------------------------------------------------------------------- replies


def test_a_verdict_count_that_differs_is_reasked_and_wrong_numbers_are_taken_in_order() -> None:
    def short_then_zero_based(schema: str, messages: list[BaseMessage]) -> Reply:
        contexts = contexts_of(prompt_section(messages, "source"))
        verdicts = [
            {
                "index": index,
                "reason": "r",
                "verdict": "Useful." if context != USELESS else "NOT USEFUL",
            }
            for index, context in enumerate(contexts)  # 0-based
        ]
        return {"verdicts": verdicts if is_reask(messages) else verdicts[:1]}

    judge = ScriptedChatModel(responder=short_then_zero_based, model="judge-a")
    result = ContextPrecision(llm=judge).invoke(sample([USELESS, USEFUL]))
    assert result.score == 0.5
    assert judge.calls_for("ContextVerdicts") == 2  # re-asked once, never trimmed
    assert "there are 2 contexts" in str(judge.calls[1][1][-1].content)
    verdicts = result.details.models["judge-a"].contexts  # type: ignore[union-attr]
    assert [v.taken_in_order for v in verdicts] == [True, True]
    assert ContextVerdict.model_validate({"reason": "r", "verdict": " not-useful. "}).verdict == (
        "not_useful"
    )


# --------------------------------------------------------------------------- panels, sync


def test_a_panel_with_a_failing_judge_scores_with_the_others() -> None:
    def broken(schema: str, messages: list[BaseMessage]) -> Reply:
        return RuntimeError("judge exploded")

    bad = ScriptedChatModel(responder=broken, model="bad")
    for metric, step in (
        (ContextPrecision, "judge_context_usefulness"),
        (ContextRecall, "decompose_claims"),
    ):
        result = metric(
            llm=[context_judge("good", claims={REFERENCE: REFERENCE_CLAIMS}), bad],
            aggregation="min",
        ).invoke(sample([USEFUL, USELESS]))
        assert list(result.per_model) == ["good"] and result.score is not None
        assert [(f.model, f.step) for f in result.excluded] == [("bad", step)]
        assert "left out: bad" in result.reason


def test_a_panel_aggregates_the_judges_scores() -> None:
    both = context_judge("a", useful={USEFUL, ALSO_USEFUL})
    one = context_judge("b", useful={ALSO_USEFUL})
    result = ContextPrecision(llm=[both, one], aggregation="mean").invoke(
        sample([USEFUL, ALSO_USEFUL])
    )
    assert result.per_model == {"a": 1.0, "b": 0.5}
    assert result.score == pytest.approx(0.75) and result.spread == pytest.approx(0.5)


def test_sync_async_and_batch_agree() -> None:
    metric = ContextPrecision(llm=context_judge())
    data = sample([USELESS, USEFUL, ALSO_USEFUL])
    sync = metric.invoke(data)
    asynchronous = asyncio.run(metric.ainvoke(data))
    batched = metric.batch([data, sample([USEFUL])])
    assert sync.score == asynchronous.score == batched[0].score == pytest.approx(0.5833, abs=1e-4)
    assert batched[1].score == 1.0


def test_custom_prompts_per_step_are_checked_and_sent() -> None:
    judge = context_judge()
    metric = ContextPrecision(llm=judge, prompts={"judge_context_usefulness": "Be very strict."})
    metric.invoke(sample([USEFUL]))
    assert "Be very strict." in str(judge.calls[0][1][0].content)
    assert "Example input:" not in str(judge.calls[0][1])  # a custom prompt drops defaults
    with pytest.raises(ValueError, match="no step 'judge_aspect'"):
        ContextPrecision(llm=judge, prompts={"judge_aspect": "x"})
    default = context_judge()
    ContextPrecision(llm=default).invoke(sample([USEFUL]))
    sent = str(default.calls[0][1])
    assert "Example input:" in sent and "Волга" in sent and "巴黎" in sent  # EN/RU/ZH shots


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("metric", "field", "data"),
    [
        (ContextRecall, "reference", {"retrieved_contexts": [USEFUL]}),
        (ContextRecall, "retrieved_contexts", {"reference": REFERENCE}),
        (ContextPrecision, "user_input", {"reference": REFERENCE, "retrieved_contexts": ["x"]}),
        (ContextPrecision, "reference", {"user_input": QUESTION, "retrieved_contexts": ["x"]}),
        (
            ContextPrecision,
            "retrieved_contexts",
            {"user_input": QUESTION, "reference": REFERENCE, "retrieved_contexts": []},
        ),
        (ContextRecall, "reference", {"reference": "  ", "retrieved_contexts": ["x"]}),
    ],
)
def test_bad_input_is_refused_before_any_request(
    server: LocalOpenAIServer, metric: Any, field: str, data: dict[str, Any]
) -> None:
    with pytest.raises(InvalidSampleError) as caught:
        metric(llm=local_judge(server)).invoke(data)
    assert caught.value.field == field and caught.value.metric == metric.metric_key
    assert metric.metric_key in str(caught.value) and field in str(caught.value)
    assert server.requests == []


# --------------------------------------------------------------------------- faces


def test_the_estimate_answers_the_new_step_without_a_request(server: LocalOpenAIServer) -> None:
    llm = local_judge(server)
    metrics = [ContextRecall(llm=llm), ContextPrecision(llm=llm)]
    plan = estimate([sample([USEFUL, USELESS]), sample([USEFUL], reference="Paris.")], metrics)
    assert plan.dry_run_errors == 0 and server.requests == []
    assert plan.total.requests == 2 * (2 + 1)  # per sample: decompose, verify; one verdict call
    # The same reference (with the same question) in two samples is decomposed once.
    again = estimate([sample([USEFUL, USELESS]), sample([USEFUL])], metrics)
    assert again.total.requests == 2 * (2 + 1) - 1


def test_the_langsmith_function_evaluator() -> None:
    evaluate = ContextPrecision(llm=context_judge()).as_function_evaluator()
    scored = evaluate(
        inputs={"question": QUESTION},
        outputs={"answer": "1889", "contexts": [USELESS, USEFUL]},
        reference_outputs={"reference": REFERENCE},
    )
    assert scored["key"] == "context_precision" and scored["score"] == 0.5


def test_the_registry_offers_both() -> None:
    assert METRICS["context_recall"].required_fields == ("reference", "retrieved_contexts")
    assert METRICS["context_precision"].needs_judge
    assert not METRICS["context_recall"].needs_embeddings


KEY_ENV = "ANSWER_METRICS_TEST_CONTEXT_KEY"
ROWS = [
    {
        "id": "a",
        "question": "When was the Eiffel Tower built?",
        "answer": "It was built in 1889.",
        "ground_truth": "The Eiffel Tower was built in 1889.",
        "contexts": ["Lyon has a Roman theatre.", "The Eiffel Tower was completed in 1889."],
    },
    {
        "id": "b",
        "question": "Какая столица России?",
        "answer": "Москва.",
        "ground_truth": "Москва — столица России.",
        "contexts": ["Москва — столица России.", "Байкал — самое глубокое озеро мира."],
    },
    {
        "id": "c",
        "question": "中国的首都是哪里?",
        "answer": "北京。",
        "ground_truth": "中国的首都是北京。",
        "contexts": ["熊猫生活在四川的山区。"],
    },
]


@pytest.fixture
def models(tmp_path: Path, server: LocalOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("OPENAI_API_KEY", "LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(KEY_ENV, "sk-test-context")
    return write_models_yaml(tmp_path, local_models(server, KEY_ENV))


def test_the_cli_scores_reports_estimates_and_resumes_them(
    tmp_path: Path, models: Path, server: LocalOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "qa.jsonl"
    data.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in ROWS), "utf-8")
    out, report = tmp_path / "out.jsonl", tmp_path / "report.html"
    command = [
        str(a)
        for a in (
            "evaluate",
            data,
            "--metric",
            "context_recall",
            "--metric",
            "context_precision,context_relevance",
            "--config",
            models,
            "--out",
            out,
            "--report",
            report,
            "--quiet",
        )
    ]

    assert main([*command[:-1], "--estimate"]) == 0, capsys.readouterr().err
    assert server.requests == []
    capsys.readouterr()

    assert main(command) == 0, capsys.readouterr().err
    lines = {
        line["id"]: line["metrics"] for line in map(json.loads, out.read_text("utf-8").splitlines())
    }
    assert {key: lines[key]["context_precision"]["score"] for key in lines} == {
        "a": 0.5,
        "b": 1.0,
        "c": 0.0,
    }
    recall = lines["a"]["context_recall"]
    assert recall["kind"] == "context_recall" and recall["score"] == 1.0
    assert recall["claims"][0]["side"] == "reference" and recall["claims"][0]["verdict"]
    assert lines["c"]["context_recall"]["score"] == 0.0
    assert lines["c"]["context_recall"]["claims"][0]["verdict"] == "neutral"
    assert lines["a"]["context_precision"]["kind"] == "context_precision"
    assert "not useful: #1" in lines["a"]["context_precision"]["reason"]
    assert {key: lines[key]["context_relevance"]["score"] for key in lines} == {
        "a": 0.5,
        "b": 0.5,
        "c": 0.0,
    }
    page = report.read_text("utf-8")
    assert "context_precision" in page and "context_recall" in page
    assert "context_relevance" in page
    sent = server.chat_requests
    assert sent == 3 * 4  # per sample: decompose, verify; one verdict call per context metric
    capsys.readouterr()

    assert main(command) == 0  # resumed: nothing scored twice
    assert server.chat_requests == sent
    assert "resuming: 3 samples already scored" in capsys.readouterr().err


def test_the_cli_calibrates_them(tmp_path: Path, models: Path) -> None:
    labelled = Path(__file__).resolve().parent.parent / "langchain_answer_metrics" / "data"
    path = tmp_path / "cal.json"
    result = cli(
        "calibrate",
        labelled / "demo_labelled.jsonl",
        "--metric",
        "context_recall",
        "--metric",
        "context_precision",
        "--config",
        models,
        "--threshold",
        "0.5",
        "--json",
        path,
        "--quiet",
        env=clean_env(**{KEY_ENV: "sk-test-context"}),
    )
    assert result.returncode == 0, result.stderr
    payload = json.loads(path.read_text("utf-8"))
    assert {"context_recall", "context_precision"} <= set(payload)
    assert payload["context_precision"]["aggregate"]["n"]["value"] == 12
    assert "context_precision (binary labels" in result.stdout


def test_the_demo_shows_them_against_the_toy_judge(server: LocalOpenAIServer) -> None:
    done = cli(
        "demo",
        "--metric",
        "context_recall,context_precision",
        "--base-url",
        server.base_url,
        "--model",
        "judge-a",
        "--quiet",
    )
    assert done.returncode == 0, done.stderr
    assert "context_recall" in done.stdout and "context_precision" in done.stdout
    assert "ru-moscow-correct" in done.stdout and "zh-beijing-correct" in done.stdout
    assert server.chat_requests == 12 * 3  # per sample: decompose, verify; one verdict call


# --------------------------------------------------------------------------- ContextRelevance


def relevance_judge(model: str = "judge-a", *, relevant: set[str]) -> ScriptedChatModel:
    def reply(schema: str, messages: list[BaseMessage]) -> Reply:
        assert schema == "ContextRelevanceVerdicts", schema
        content = str(messages[-1].content)
        assert "<query>" in content and "<reference>" not in content  # no reference sent
        contexts = contexts_of(prompt_section(messages, "source"))
        return {
            "verdicts": [
                {
                    "index": index,
                    "reason": f"about {context[:8]}",
                    "verdict": "Relevant" if context in relevant else "not relevant",
                }
                for index, context in enumerate(contexts, 1)
            ]
        }

    return ScriptedChatModel(responder=reply, model=model)


@pytest.mark.parametrize(
    ("relevant", "expected"),
    [
        ({USEFUL, ALSO_USEFUL}, 2 / 3),
        ({USELESS}, 1 / 3),
        (set(), 0.0),
        ({USEFUL, USELESS, ALSO_USEFUL}, 1.0),
    ],
)
def test_context_relevance_is_the_share_of_relevant_contexts(
    relevant: set[str], expected: float
) -> None:
    judge = relevance_judge(relevant=relevant)
    result = ContextRelevance(llm=judge).invoke(
        {"user_input": QUESTION, "retrieved_contexts": [USELESS, USEFUL, ALSO_USEFUL]}
    )
    assert result.score == pytest.approx(expected)
    assert len(judge.calls) == 1  # one request for all the contexts
    details = result.details
    assert isinstance(details, ContextRelevanceDetails)
    model = details.models["judge-a"]
    assert [v.rank for v in model.contexts] == [1, 2, 3]
    assert (model.relevant, model.total) == (len(relevant), 3)
    assert f"{len(relevant)} of 3 contexts relevant" in result.reason


@pytest.mark.parametrize("language", list(LANGUAGES))
@pytest.mark.parametrize("method", ["function_calling", "json_mode", "json_schema"])
def test_context_relevance_over_http_in_every_language(
    server: LocalOpenAIServer, language: str, method: str
) -> None:
    question, _, useful, useless = LANGUAGES[language]
    judge = Judge(model=local_judge(server), method=method)  # type: ignore[arg-type]
    metric = ContextRelevance(llm=judge)
    assert metric.score(user_input=question, retrieved_contexts=[useless, useful]) == 0.5
    assert metric.score(user_input=question, retrieved_contexts=[useful]) == 1.0
    assert requests_by_schema(server) == {"ContextRelevanceVerdicts": 2}


def test_context_relevance_refuses_bad_input_and_runs_in_the_estimate(
    server: LocalOpenAIServer,
) -> None:
    metric = ContextRelevance(llm=local_judge(server))
    with pytest.raises(InvalidSampleError, match="context_relevance: field 'user_input'"):
        metric.invoke({"retrieved_contexts": [USEFUL]})
    plan = estimate([{"user_input": QUESTION, "retrieved_contexts": [USEFUL, USELESS]}], [metric])
    assert plan.dry_run_errors == 0 and plan.total.requests == 1 and server.requests == []
    assert METRICS["context_relevance"].required_fields == ("user_input", "retrieved_contexts")


# --------------------------------------------------------------------------- the docs pages

DOCS = Path(__file__).resolve().parent.parent / "docs" / "metrics"
PRINTED = {
    "context-recall.md": [
        "0.5 False",
        "1 of 2 reference claims are supported by the retrieved contexts; unsupported: "
        "“It stands in Paris.” (neutral)",
        "supported - The Eiffel Tower was built in 1889.",
        "neutral - It stands in Paris.",
        "None",
        "5",
    ],
    "context-precision.md": [
        "0.833",
        "average precision 0.83: 2 of 3 contexts useful, at ranks 1, 3; not useful: #2 "
        "“Lyon has a Roman theatre.” (The context does not state the reference answer's facts.)",
        "1 useful",
        "2 not_useful",
        "3 useful",
        "0.5",
    ],
    "context-relevance.md": [
        "0.667",
        "2 of 3 contexts relevant, at ranks 1, 3; not relevant: #2 “Lyon has a Roman "
        "theatre.” (The context is not about what the question asks.)",
        "0.5",
    ],
}


@pytest.mark.parametrize("page", list(PRINTED))
def test_the_docs_pages_print_what_their_comments_say(
    page: str,
    server: LocalOpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # tests/test_docs_examples.py runs every page; this checks the outputs these pages show.
    monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/{uuid.uuid4().hex[:12]}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "toy")
    text = (DOCS / page).read_text("utf-8")
    namespace: dict[str, Any] = {}
    for block in re.findall(r"```python\n(.*?)```", text, re.S):
        exec(compile(block, str(DOCS / page), "exec"), namespace)
    assert capsys.readouterr().out.splitlines() == PRINTED[page]
