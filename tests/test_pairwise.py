"""PairwisePreference: two responses judged in both orders, through the real HTTP path
(ChatOpenAI against the local server); position bias; the LangSmith comparative evaluator
offline; ``answer-metrics compare --judge pairwise`` end to end."""

from __future__ import annotations

import asyncio
import datetime
import json
import re
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import langsmith
import pytest
from langchain_core.prompts import ChatPromptTemplate
from langchain_openai import ChatOpenAI
from langsmith import Client, schemas
from pydantic import ValidationError

from langchain_answer_metrics.cli.command import main
from langchain_answer_metrics.core.result import MetricResult
from langchain_answer_metrics.core.sample import InvalidSampleError, SampleLike
from langchain_answer_metrics.judging.panel import AllModelsFailedError
from langchain_answer_metrics.judging.steps.pairwise import PairwiseVerdict
from langchain_answer_metrics.mapping import MissingFieldError, SampleMapping
from langchain_answer_metrics.metrics.factual_correctness import FactualCorrectness
from langchain_answer_metrics.metrics.pairwise import (
    PairSample,
    PairwisePreference,
    PairwisePreferenceDetails,
)
from langchain_answer_metrics.run.estimate.estimator import estimate
from langchain_answer_metrics.run.runner import (
    MetricError,
    aevaluate_dataset,
    evaluate_dataset,
    stream_evaluate,
)
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer, RequestInfo

pytestmark = pytest.mark.usefixtures("network_attempts")  # see conftest.py

BERLIN = {
    "user_input": "When did the Berlin Wall fall?",
    "reference": "The Berlin Wall fell on 9 November 1989.",
    "response_a": "It fell on 9 November 1989.",
    "response_b": "It fell in 1991.",
}
# The same question with the better answer second.
BERLIN_SWAPPED = {**BERLIN, "response_a": BERLIN["response_b"], "response_b": BERLIN["response_a"]}
PAIRS: list[dict[str, str]] = [
    BERLIN,
    BERLIN_SWAPPED,
    {
        "user_input": "Столица Австралии?",
        "reference": "Канберра.",
        "response_a": "Сидней.",
        "response_b": "Канберра.",
    },
    {
        "user_input": "水的沸点是多少？",
        "reference": "水在标准大气压下的沸点是100摄氏度。",
        "response_a": "水的沸点是100摄氏度。",
        "response_b": "水的沸点是50度。",
    },
]


def judge(server: LocalOpenAIServer, model: str = "judge-a", **options: Any) -> ChatOpenAI:
    return ChatOpenAI(
        model=model,
        base_url=server.base_url,
        api_key="sk-test",
        use_responses_api=False,
        max_retries=0,
        **options,
    )


def chat_requests(server: LocalOpenAIServer) -> list[Any]:
    return [entry for entry in server.requests if entry.path.endswith("/chat/completions")]


def details(result: MetricResult) -> PairwisePreferenceDetails:
    assert isinstance(result.details, PairwisePreferenceDetails)
    return result.details


def positional(picked: str) -> Callable[[RequestInfo], Mapping[str, Any]]:
    """A judge that always picks the answer shown in one position, whatever it says."""

    def respond(info: RequestInfo) -> Mapping[str, Any]:
        return {"reason": f"Answer {picked} looks better.", "verdict": picked}

    return respond


@pytest.fixture
def own_server() -> Iterator[LocalOpenAIServer]:
    """A server of the test's own (its responder may be replaced)."""
    with LocalOpenAIServer() as server:
        yield server


# --------------------------------------------------------------------------- the metric


def test_a_consistent_panel_prefers_the_better_answer_in_both_orders(
    server: LocalOpenAIServer,
) -> None:
    metric = PairwisePreference(llm=[judge(server, "judge-a"), judge(server, "judge-b")])
    better_a = metric.invoke(BERLIN)
    better_b = metric.invoke(BERLIN_SWAPPED)
    assert better_a.score == pytest.approx(1.0) and better_b.score == pytest.approx(0.0)
    assert better_a.per_model == {"judge-a": 1.0, "judge-b": 1.0}
    for label in ("judge-a", "judge-b"):
        model = details(better_a).models[label]
        assert model.preferred == "A" and model.position_bias is False
        # Each order's positional verdict, mapped back to the response it names.
        assert [(o.shown_first, o.picked, o.preferred) for o in model.orders] == [
            ("A", "A", "A"),
            ("B", "B", "A"),
        ]
        assert all(order.reason for order in model.orders)
        # Both orders are requests of this judge.
        assert better_a.usage[label].requests == 2
    assert len(chat_requests(server)) == 8
    assert "A is better in both orders" in better_a.reason


def test_each_order_shows_the_other_response_first(server: LocalOpenAIServer) -> None:
    PairwisePreference(llm=judge(server)).invoke(BERLIN)
    shown = sorted(
        (entry.body["messages"][-1]["content"] for entry in chat_requests(server)),
        key=lambda text: text.index(BERLIN["response_a"]),
    )
    first, second = shown
    assert first.index(BERLIN["response_a"]) < first.index(BERLIN["response_b"])
    assert second.index(BERLIN["response_b"]) < second.index(BERLIN["response_a"])
    # Default few-shot examples go before the data, and the reference goes with it.
    assert "Example input:" in str(chat_requests(server)[0].body["messages"])
    assert "<reference>" in first and BERLIN["reference"] in first


@pytest.mark.parametrize("picked", ["A", "B"])
def test_a_judge_that_always_prefers_one_position_gives_ties_flagged_position_bias(
    own_server: LocalOpenAIServer, picked: str
) -> None:
    own_server.responder = positional(picked)
    metric = PairwisePreference(llm=[judge(own_server, "judge-a"), judge(own_server, "judge-b")])
    results = metric.batch(list[SampleLike](PAIRS))
    assert len(results) == len(PAIRS)
    for result in results:
        assert result.score == pytest.approx(0.5)  # a tie, never a win
        for model in details(result).models.values():
            assert model.position_bias is True and model.preferred == "tie"
            # Both verdicts are kept: each names the response shown in that position.
            assert [o.picked for o in model.orders] == [picked, picked]
            assert {o.preferred for o in model.orders} == {"A", "B"}
        assert "position bias" in result.reason
        assert details(result).position_bias == {"judge-a": True, "judge-b": True}


def test_a_tie_given_in_both_orders_is_a_tie_without_position_bias(
    own_server: LocalOpenAIServer,
) -> None:
    own_server.responder = lambda info: {"reason": "Both are fine.", "verdict": "Tie."}
    result = PairwisePreference(llm=judge(own_server)).invoke(BERLIN)
    assert result.score == pytest.approx(0.5)
    model = details(result).models["judge-a"]
    assert model.preferred == "tie" and model.position_bias is False


def test_judges_that_disagree_are_aggregated_by_the_panel(own_server: LocalOpenAIServer) -> None:
    def respond(info: RequestInfo) -> Mapping[str, Any]:
        # judge-a prefers the right date wherever it is shown; judge-b the wrong one.
        right = "1989" in info.sections["answer_a"]
        wants_right = info.model == "judge-a"
        return {"reason": "r", "verdict": "A" if right == wants_right else "B"}

    own_server.responder = respond
    judges = [judge(own_server, "judge-a"), judge(own_server, "judge-b")]
    result = PairwisePreference(llm=judges).invoke(BERLIN)
    assert result.per_model == {"judge-a": 1.0, "judge-b": 0.0}
    assert result.score == pytest.approx(0.5) and result.spread == pytest.approx(1.0)
    low = PairwisePreference(llm=judges, aggregation="min").invoke(BERLIN)
    assert low.score == pytest.approx(0.0)


def test_a_failing_judge_is_excluded_and_reported(server: LocalOpenAIServer) -> None:
    server.faults = lambda info: "500" if info.model == "judge-b" else None
    metric = PairwisePreference(llm=[judge(server, "judge-a"), judge(server, "judge-b")])
    result = metric.invoke(BERLIN)
    assert result.score == pytest.approx(1.0)
    assert result.per_model == {"judge-a": 1.0}
    assert [failure.model for failure in result.excluded] == ["judge-b"]
    assert result.excluded[0].step == "judge_pairwise"
    assert "judge-b" in result.reason
    # Both of judge-b's orders were sent (and failed): its spend is kept.
    assert server.model_counts["judge-b"] == 2
    assert result.usage["judge-b"].requests == 2


def test_every_judge_failing_raises_naming_each(server: LocalOpenAIServer) -> None:
    server.faults = "500"
    metric = PairwisePreference(llm=[judge(server, "judge-a"), judge(server, "judge-b")])
    with pytest.raises(AllModelsFailedError, match="judge-a failed at judge_pairwise"):
        metric.invoke(BERLIN)


# --------------------------------------------------------------------------- concurrency


def paired_arrivals(server: LocalOpenAIServer) -> list[bool]:
    """A responder that holds each request until the other order's has arrived (or 10 s
    pass): records, per request, whether the other was already in flight."""
    arrived = threading.Semaphore(0)
    seen: list[bool] = []
    lock = threading.Lock()

    def respond(info: RequestInfo) -> Mapping[str, Any]:
        arrived.release()
        with lock:
            first = len(seen) % 2 == 0
            seen.append(False)
            index = len(seen) - 1
        if first:
            # Wait for the second request before answering the first: if the orders were
            # sent one after the other, it never comes while we hold the first.
            got = arrived.acquire(timeout=10) and arrived.acquire(timeout=10)
            seen[index] = bool(got)
            if got:
                arrived.release()
                arrived.release()
        else:
            seen[index] = True
        return {"reason": "r", "verdict": "A" if "1989" in info.sections["answer_a"] else "B"}

    server.responder = respond
    return seen


def test_both_orders_are_in_flight_at_once_sync(own_server: LocalOpenAIServer) -> None:
    seen = paired_arrivals(own_server)
    result = PairwisePreference(llm=judge(own_server)).invoke(BERLIN)
    assert result.score == pytest.approx(1.0)
    assert seen == [True, True]


async def test_both_orders_are_in_flight_at_once_async(own_server: LocalOpenAIServer) -> None:
    seen = paired_arrivals(own_server)
    result = await PairwisePreference(llm=judge(own_server)).ainvoke(BERLIN)
    assert result.score == pytest.approx(1.0)
    assert result.usage["judge-a"].requests == 2
    assert seen == [True, True]


async def test_sync_and_async_give_the_same_results(server: LocalOpenAIServer) -> None:
    metric = PairwisePreference(llm=[judge(server, "judge-a"), judge(server, "judge-b")])
    sync = [metric.invoke(pair) for pair in PAIRS]
    concurrent = await asyncio.gather(*(metric.ainvoke(pair) for pair in PAIRS))
    assert [r.score for r in sync] == [r.score for r in concurrent] == [1.0, 0.0, 0.0, 1.0]
    assert [r.details for r in sync] == [r.details for r in concurrent]


# --------------------------------------------------------------------------- input


@pytest.mark.parametrize(
    ("pair", "field", "problem"),
    [
        ({"user_input": "q", "response_a": "x"}, "response_b", "required but missing"),
        ({"response_a": "", "response_b": "y"}, "response_a", "empty"),
        ({"response_a": "x", "response_b": " \u200b "}, "response_b", "empty"),
        ({"response_a": 3j, "response_b": "y"}, "response_a", "holds a complex, expected text"),
        ({"response": "x", "response_a": "x", "response_b": "y"}, "response", "not a field"),
        ({"user_input": ["q"], "response_a": "x", "response_b": "y"}, "user_input", "holds a list"),
    ],
)
def test_a_bad_pair_is_refused_before_any_request_naming_field_and_metric(
    server: LocalOpenAIServer, pair: dict[str, Any], field: str, problem: str
) -> None:
    metric = PairwisePreference(llm=judge(server), name="prefer")
    with pytest.raises(InvalidSampleError, match=problem) as caught:
        metric.invoke(pair)
    assert (caught.value.metric, caught.value.field) == ("prefer", field)
    assert str(caught.value).startswith(f"prefer: field '{field}'")
    assert server.requests == []


def test_a_pair_sample_is_taken_as_is_and_by_the_runner(server: LocalOpenAIServer) -> None:
    metric = PairwisePreference(llm=judge(server))
    pair = PairSample(**BERLIN)
    assert metric.invoke(pair).score == pytest.approx(1.0)
    rows = evaluate_dataset([PairSample(**p) for p in PAIRS], [metric], max_requests=100)
    assert [row.results["pairwise_preference"].score for row in rows] == [1.0, 0.0, 0.0, 1.0]
    assert "response_a='It fell on 9 November 1989.'" in repr(pair)


# ------------------------------------------------------------- dict rows and DataFrames

# The same pairs as a user's dataset writes them: the dataset names of the usual fields,
# a pair's responses as response_a / answer_b.
DATASET_ROWS: list[dict[str, Any]] = [
    {
        "question": p["user_input"],
        "ground_truth": p["reference"],
        "response_a": p["response_a"],
        "answer_b": p["response_b"],
        "id": number,
    }
    for number, p in enumerate(PAIRS)
]
PAIR_SCORES = [1.0, 0.0, 0.0, 1.0]


def scores(rows: Any, key: str = "pairwise_preference") -> list[float | None]:
    return [getattr(row.results[key], "score", None) for row in rows]


def test_dict_rows_are_scored_by_evaluate_dataset_and_stream_evaluate(
    server: LocalOpenAIServer,
) -> None:
    metric = PairwisePreference(llm=judge(server))
    rows = evaluate_dataset(DATASET_ROWS, [metric], max_requests=100)
    assert scores(rows) == pytest.approx(PAIR_SCORES)
    assert details(rows[0].results["pairwise_preference"]).models["judge-a"].preferred == "A"
    # The reference reached the prompt from the row's ground_truth.
    assert any(BERLIN["reference"] in str(r.body["messages"]) for r in chat_requests(server))
    streamed = list(stream_evaluate(iter(DATASET_ROWS), [metric], window=2))
    assert scores(streamed) == pytest.approx(PAIR_SCORES)


async def test_dict_rows_are_scored_by_aevaluate_dataset(own_server: LocalOpenAIServer) -> None:
    # A server of its own: langchain-openai shares one async client per base URL, which a
    # closed loop of an earlier test would break (see test_event_loops.py).
    rows = await aevaluate_dataset(DATASET_ROWS, [PairwisePreference(llm=judge(own_server))])
    assert scores(rows) == pytest.approx(PAIR_SCORES)


def test_a_dataframe_of_pairs_is_scored_with_its_columns_kept(server: LocalOpenAIServer) -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(DATASET_ROWS)
    rows = evaluate_dataset(frame, [PairwisePreference(llm=judge(server))])
    table = rows.to_pandas()
    assert list(table["answer_b"]) == [p["response_b"] for p in PAIRS]
    assert list(table["pairwise_preference_score"]) == pytest.approx(PAIR_SCORES)
    assert table["pairwise_preference_error"].isna().all()


def test_a_row_missing_response_b_is_refused_per_sample_before_its_requests(
    server: LocalOpenAIServer,
) -> None:
    broken = {"question": "Capital of Peru?", "response_a": "Lima.", "response_b": None}
    rows = evaluate_dataset([DATASET_ROWS[0], broken], [PairwisePreference(llm=judge(server))])
    assert rows[0].results["pairwise_preference"].score == pytest.approx(1.0)
    error = rows[1].results["pairwise_preference"]
    assert isinstance(error, MetricError) and error.error_type == "InvalidSampleError"
    assert error.message.startswith("pairwise_preference: field 'response_b' is required")
    # Only the good row's two orders were sent; nothing of the refused row.
    assert len(chat_requests(server)) == 2
    assert not any("Peru" in str(r.body) for r in chat_requests(server))
    # Every row without a pair: each refused naming the field, no request at all.
    server.reset()
    no_pair = [{"question": "Q?", "answer": "A."}]
    rows = evaluate_dataset(no_pair, [PairwisePreference(llm=judge(server))])
    message = rows[0].results["pairwise_preference"].message
    assert message == "pairwise_preference: field 'response_a' is required but missing"
    assert server.requests == []


def test_a_run_mixing_pairwise_and_an_ordinary_metric_gives_each_its_fields(
    server: LocalOpenAIServer,
) -> None:
    # The first row also has the answer the ordinary metric scores; the second has not.
    scored = {**DATASET_ROWS[0], "answer": BERLIN["response_a"]}
    metrics = [PairwisePreference(llm=judge(server)), FactualCorrectness(llm=judge(server))]
    rows = evaluate_dataset([scored, DATASET_ROWS[2]], metrics)
    assert scores(rows) == pytest.approx([1.0, 0.0])
    assert isinstance(rows[0].results["factual_correctness"], MetricResult)
    refused = rows[1].results["factual_correctness"]
    assert isinstance(refused, MetricError)
    assert refused.message == "factual_correctness: field 'response' is required but missing"
    # Two orders per pair; the ordinary metric's requests are the first row's answer and
    # reference only: never the pair's other response, nothing of the refused row.
    asked = [str(r.body["messages"][-1]["content"]) for r in chat_requests(server)]
    pairwise = [text for text in asked if text.startswith("Which answer is better")]
    assert len(pairwise) == 4 and sum("Сидней" in text for text in pairwise) == 2
    factual = [text for text in asked if text not in pairwise]
    assert factual and all("Berlin" in text and "1991" not in text for text in factual)


def test_user_column_names_map_a_pair_with_sample_mapping(server: LocalOpenAIServer) -> None:
    mapping = SampleMapping.for_rows(
        user_input="prompt", response_a="model_x", response_b="model_y"
    )
    table = [
        {
            "prompt": p["user_input"],
            "model_x": p["response_a"],
            "model_y": p["response_b"],
            "reference": p["reference"],
        }
        for p in PAIRS
    ]
    pairs = [mapping.from_row(row, model=PairSample) for row in table]
    assert pairs[0] == PairSample(**BERLIN)
    rows = evaluate_dataset(pairs, [PairwisePreference(llm=judge(server))])
    assert scores(rows) == pytest.approx(PAIR_SCORES)
    # The runner's dict rows take the same overrides through fields_of.
    assert mapping.fields_of(table[0])["response_b"] == BERLIN["response_b"]
    with pytest.raises(MissingFieldError, match="field 'response_b' was not found") as caught:
        mapping.from_row({"model_x": "4"}, model=PairSample, metric="pairwise_preference")
    assert caught.value.metric == "pairwise_preference"
    with pytest.raises(ValidationError, match="did you mean response_a"):
        SampleMapping(overrides={"response_aa": "x"})
    # The DataFrame helpers build pairs too when told to (a plain Sample has no place).
    from langchain_answer_metrics.run.tables import samples_from_records

    built = samples_from_records(
        table, model=PairSample, user_input="prompt", response_a="model_x", response_b="model_y"
    )
    assert built == pairs


def test_an_empty_criterion_is_refused() -> None:
    model = ChatOpenAI(model="judge-a", api_key="sk-x")
    with pytest.raises(ValidationError, match="criterion is empty"):
        PairwisePreference(llm=model, criterion="  ")


# --------------------------------------------------------------------------- the step


@pytest.mark.parametrize(
    ("given", "read"),
    [
        ("A", "A"),
        ("a", "A"),
        (" b. ", "B"),
        ("Answer A", "A"),
        ("answer b.", "B"),
        ("TIE", "tie"),
        ("Tie.", "tie"),
    ],
)
def test_verdict_labels_are_read_as_a_careful_reader_would(given: str, read: str) -> None:
    assert PairwiseVerdict.model_validate({"reason": "r", "verdict": given}).verdict == read


@pytest.mark.parametrize("given", ["first", "A or B", "both", "AB", "Answer", "", "C"])
def test_labels_that_would_need_a_guess_are_refused(given: str) -> None:
    with pytest.raises(ValidationError):
        PairwiseVerdict.model_validate({"reason": "r", "verdict": given})


def test_a_reply_needing_a_guess_is_asked_again(own_server: LocalOpenAIServer) -> None:
    def respond(info: RequestInfo) -> Mapping[str, Any]:
        reasked = "could not be used" in str(info.messages)
        return {"reason": "r", "verdict": "A" if reasked else "the first one"}

    own_server.responder = respond
    result = PairwisePreference(llm=judge(own_server)).invoke(BERLIN)
    # Re-asked in each order; both then pick position A: a biased tie, not a guess.
    assert result.score == pytest.approx(0.5)
    assert details(result).models["judge-a"].position_bias is True
    assert own_server.chat_requests == 4


def test_custom_prompts_and_examples_per_step(server: LocalOpenAIServer) -> None:
    metric = PairwisePreference(
        llm=judge(server), prompts={"judge_pairwise": "Prefer the answer with the right date."}
    )
    assert metric.invoke(BERLIN).score == pytest.approx(1.0)
    system = chat_requests(server)[0].body["messages"][0]["content"]
    assert system.startswith("Prefer the answer with the right date.")
    assert "Example input:" not in str(chat_requests(server)[0].body["messages"])
    with pytest.raises(ValueError, match=r"unknown variable \{response\}"):
        PairwisePreference(
            llm=judge(server),
            prompts={
                "judge_pairwise": ChatPromptTemplate(
                    [("human", "{answer_a} {answer_b} {criterion} {response}")]
                )
            },
        )
    with pytest.raises(ValueError, match="not a PairwiseVerdict"):
        PairwisePreference(
            llm=judge(server),
            examples={
                "judge_pairwise": [
                    {
                        "input": {"criterion": "c", "answer_a": "x", "answer_b": "y"},
                        "output": {"reason": "r", "verdict": "first"},
                    }
                ]
            },
        )


def test_the_criterion_reaches_the_prompt(server: LocalOpenAIServer) -> None:
    metric = PairwisePreference(llm=judge(server), criterion="The more polite answer.")
    result = metric.invoke(BERLIN)
    assert details(result).criterion == "The more polite answer."
    assert "The more polite answer." in chat_requests(server)[0].body["messages"][-1]["content"]


def test_the_estimate_counts_both_orders_without_a_request(server: LocalOpenAIServer) -> None:
    metric = PairwisePreference(llm=[judge(server, "judge-a"), judge(server, "judge-b")])
    pairs = [PairSample(**pair) for pair in PAIRS]
    plan = estimate(pairs, [metric])
    assert plan.dry_run_errors == 0
    # Two orders per judge per pair; BERLIN_SWAPPED's orders are BERLIN's, asked once a run.
    assert plan.total.requests == 2 * 2 * (len(PAIRS) - 1)
    assert server.requests == []
    evaluate_dataset(pairs, [metric])
    assert len(chat_requests(server)) == plan.total.requests


# --------------------------------------------------------------------------- LangSmith

DATASET = uuid.UUID(int=7)
COMPARED = [BERLIN, PAIRS[2], PAIRS[3]]  # one pair per question


def offline_client() -> Client:
    return Client(
        api_key="offline",
        api_url="http://127.0.0.1:9",
        auto_batch_tracing=False,
        tracing_sampling_rate=0.0,
    )


class KeptExperiments(Client):
    """Offline, the experiments LangSmith would read back: their runs and examples kept
    in memory, feedback recorded instead of uploaded."""

    def __init__(self) -> None:
        super().__init__(
            api_key="offline",
            api_url="http://127.0.0.1:9",
            auto_batch_tracing=False,
            tracing_sampling_rate=0.0,
        )
        self.kept: dict[uuid.UUID, list[Any]] = {}
        self.kept_examples: dict[uuid.UUID, schemas.Example] = {}
        self.feedback: list[dict[str, Any]] = []

    @property
    def info(self) -> schemas.LangSmithInfo:
        return schemas.LangSmithInfo()

    def keep(self, name: str, rows: list[Any]) -> schemas.TracerSession:
        project = schemas.TracerSession(
            id=uuid.uuid4(),
            name=name,
            start_time=datetime.datetime.now(datetime.UTC),
            reference_dataset_id=DATASET,
            tenant_id=uuid.uuid4(),
        )
        self.kept[project.id] = [row["run"] for row in rows]
        self.kept_examples.update({row["example"].id: row["example"] for row in rows})
        return project

    def create_comparative_experiment(
        self, name: str, experiments: Any, **options: Any
    ) -> schemas.ComparativeExperiment:
        now = datetime.datetime.now(datetime.UTC)
        return schemas.ComparativeExperiment(
            id=options.get("id") or uuid.uuid4(),
            name=name,
            tenant_id=uuid.uuid4(),
            created_at=now,
            modified_at=now,
            reference_dataset_id=DATASET,
        )

    def list_runs(self, *, project_id: Any = None, **options: Any) -> Iterator[Any]:
        return iter(self.kept[project_id])

    def list_examples(  # type: ignore[override]
        self, *, example_ids: Any = None, **options: Any
    ) -> Iterator[Any]:
        return iter(self.kept_examples[i] for i in example_ids)

    def create_feedback(self, run_id: Any = None, key: str = "unnamed", **options: Any) -> Any:
        self.feedback.append({"run_id": run_id, "key": key, **options})


def test_the_comparative_evaluator_in_a_langsmith_comparative_experiment(
    langsmith_offline: None, server: LocalOpenAIServer
) -> None:
    examples = [
        schemas.Example(
            id=uuid.uuid4(),
            dataset_id=DATASET,
            inputs={"question": pair["user_input"]},
            outputs={"answer": pair["reference"]},
        )
        for pair in COMPARED
    ]
    answers = {pair["user_input"]: pair for pair in COMPARED}

    def app(side: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
        return lambda inputs: {"answer": answers[inputs["question"]][f"response_{side}"]}

    # Two experiments run offline, then compared as LangSmith reads them back.
    rows = {
        side: list(
            langsmith.evaluate(
                app(side),
                data=examples,
                client=offline_client(),
                upload_results=False,
            )
        )
        for side in ("a", "b")
    }
    client = KeptExperiments()
    first, second = client.keep("prompt-a", rows["a"]), client.keep("prompt-b", rows["b"])
    metric = PairwisePreference(llm=[judge(server, "judge-a"), judge(server, "judge-b")])
    langsmith.evaluate(
        (first, second),
        evaluators=[metric.as_comparative_evaluator()],
        client=client,
        max_concurrency=4,  # examples judged in threads, as LangSmith does
    )
    runs = {side: {row["example"].id: row["run"].id for row in rows[side]} for side in rows}
    scores = {(fb["run_id"]): fb["score"] for fb in client.feedback}
    assert {fb["key"] for fb in client.feedback} == {"pairwise_preference"}
    assert len(client.feedback) == 2 * len(COMPARED)  # one score per experiment and example
    by_question = {
        (example.inputs or {})["question"]: (
            scores[runs["a"][example.id]],
            scores[runs["b"][example.id]],
        )
        for example in examples
    }
    # The first experiment's run scores the metric's score, the second's its complement.
    assert by_question == {
        BERLIN["user_input"]: (1.0, 0.0),
        PAIRS[2]["user_input"]: (0.0, 1.0),
        PAIRS[3]["user_input"]: (1.0, 0.0),
    }
    assert all(fb["comment"] for fb in client.feedback)
    assert all(fb["comparative_experiment_id"] for fb in client.feedback)


def test_a_pair_it_cannot_judge_gets_no_score_and_the_error(server: LocalOpenAIServer) -> None:
    compare = PairwisePreference(llm=judge(server)).as_comparative_evaluator()
    example = schemas.Example(id=uuid.uuid4(), dataset_id=DATASET, inputs={"question": "q"})
    runs = [
        schemas.Run(
            id=uuid.uuid4(),
            name="app",
            start_time=datetime.datetime.now(datetime.UTC),
            run_type="chain",
            inputs={},
            outputs=outputs,
        )
        for outputs in ({"answer": "An answer."}, {})
    ]
    result = compare(runs, example)
    assert result["scores"] == {runs[0].id: None, runs[1].id: None}
    assert "response" in result["comment"] and "pairwise_preference" in result["comment"]
    assert server.requests == []
    with pytest.raises(TypeError, match="did you mean response"):
        PairwisePreference(llm=judge(server)).as_comparative_evaluator(respnse="answer")


# --------------------------------------------------------------------------- the CLI

# (id, question, reference, baseline response, candidate response, baseline and candidate
# factual_correctness scores as the files carry them)
RUNS = [
    (
        "1",
        BERLIN["user_input"],
        BERLIN["reference"],
        BERLIN["response_b"],
        BERLIN["response_a"],
        0.2,
        0.9,
    ),
    ("2", PAIRS[2]["user_input"], PAIRS[2]["reference"], "Канберра.", "Сидней.", 1.0, 0.0),
    # The candidate is better, but the file's scores say it regressed: a disagreement.
    (
        "3",
        PAIRS[3]["user_input"],
        PAIRS[3]["reference"],
        PAIRS[3]["response_b"],
        PAIRS[3]["response_a"],
        0.9,
        0.3,
    ),
    (
        "4",
        "Who wrote Hamlet?",
        "Shakespeare wrote Hamlet.",
        "Shakespeare.",
        "Shakespeare.",
        0.8,
        0.8,
    ),
]


def write_runs(folder: Path) -> tuple[Path, Path]:
    paths = folder / "baseline.jsonl", folder / "candidate.jsonl"
    for path, response, score in zip(paths, (3, 4), (5, 6)):
        lines = [
            json.dumps(
                {
                    "schema_version": 2,
                    "id": row[0],
                    "user_input": row[1],
                    "reference": row[2],
                    "response": row[response],
                    "metrics": {
                        "factual_correctness": {
                            "kind": "factual_correctness",
                            "score": row[score],
                            "reason": "r",
                        }
                    },
                },
                ensure_ascii=False,
            )
            for row in RUNS
        ]
        path.write_text("\n".join(lines) + "\n", "utf-8")
    return paths


def judges_yaml(folder: Path, server: LocalOpenAIServer) -> Path:
    config = folder / "judges.yaml"
    config.write_text(
        f"providers:\n  local:\n    base_url: {server.base_url}\n"
        "chat_models:\n  list:\n    - id: judge-a\n    - id: judge-b\n"
        # the retries of a failing judge as sent, without their pauses
        "retry:\n  initial_interval: 1ms\n  max_interval: 2ms\n",
        "utf-8",
    )
    return config


def compare_cli(folder: Path, server: LocalOpenAIServer, *extra: str) -> tuple[int, dict[str, Any]]:
    """``answer-metrics compare --judge pairwise``: its exit code and its --json."""
    baseline, candidate = write_runs(folder)
    out = folder / "diff.json"
    config = judges_yaml(folder, server)
    code = main(
        [
            "compare",
            str(baseline),
            str(candidate),
            "--judge",
            "pairwise",
            "--config",
            str(config),
            "--json",
            str(out),
            "--quiet",
            *extra,
        ]
    )
    return code, json.loads(out.read_text("utf-8")) if out.exists() else {}


def test_compare_judge_pairwise_reports_wins_win_rate_bias_and_disagreements(
    tmp_path: Path, server: LocalOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    code, stats = compare_cli(tmp_path, server)
    printed = capsys.readouterr()
    assert code == 0, printed.err
    report = stats["pairwise_preference"]
    # Candidate: wins on 1 and 3, loses 2, ties 4 (the same answer).
    assert (
        report["judged"],
        report["candidate_wins"],
        report["candidate_losses"],
        report["ties"],
    ) == (4, 2, 1, 1)
    assert report["win_rate"] == pytest.approx((1 + 0 + 1 + 0.5) / 4)
    assert report["ci_low"] <= report["win_rate"] <= report["ci_high"]
    assert report["position_bias"] == {"judge-a": 0.0, "judge-b": 0.0}
    assert [(d["id"], d["preferred"], d["metric"]) for d in report["disagreements"]] == [
        ("3", "candidate", "factual_correctness"),
    ]
    # The score-based comparison is still there, beside it.
    assert stats["factual_correctness"]["n_paired"] == 4
    assert "candidate wins: 2  losses: 1  ties: 1" in printed.out
    assert "candidate win rate: 0.625" in printed.out
    assert "3: the judges prefer the candidate; factual_correctness 0.90 -> 0.30" in printed.out
    # Two orders per judge per pair; pair 4's two orders are the same request, sent once.
    assert server.chat_requests == 2 * (2 * 3 + 1)
    assert "spend (judging): 14 requests" in printed.err


def test_compare_report_shows_the_judged_preference(
    tmp_path: Path, server: LocalOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "diff.html"
    code, _ = compare_cli(tmp_path, server, "--report", str(page))
    assert code == 0, capsys.readouterr().err
    html = page.read_text("utf-8")
    assert "Judged preference (both orders)" in html
    assert "the candidate wins 2, loses 1, ties 1. Win rate 0.625 (95% CI" in html
    assert "<td>judge-a</td><td>0%</td>" in html
    assert "<td>3</td><td>candidate</td><td>factual_correctness</td>" in html


def test_compare_with_a_position_biased_judge_gives_only_ties(
    tmp_path: Path, own_server: LocalOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    own_server.responder = positional("A")
    code, stats = compare_cli(tmp_path, own_server)
    printed = capsys.readouterr()
    assert code == 0, printed.err
    report = stats["pairwise_preference"]
    assert (report["candidate_wins"], report["candidate_losses"], report["ties"]) == (0, 0, 4)
    assert report["win_rate"] == pytest.approx(0.5)
    # Even pair 4 (the same answer twice): "A" in both orders names each response once.
    assert report["position_bias"] == {"judge-a": 1.0, "judge-b": 1.0}
    assert report["disagreements"] == []
    assert "position-biased pairs (a tie): judge-a 100.0%, judge-b 100.0%" in printed.out


def test_compare_judging_stops_at_max_requests(
    tmp_path: Path, server: LocalOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    code, stats = compare_cli(tmp_path, server, "--max-requests", "4")
    printed = capsys.readouterr()
    assert code == 5, printed.err
    report = stats["pairwise_preference"]
    assert report["judged"] + report["not_run"] == 4 and report["not_run"] >= 1
    assert server.chat_requests <= 4
    assert "stopped early" in printed.err and "not judged" in printed.err


def test_compare_judge_estimate_sends_no_request(
    tmp_path: Path, server: LocalOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = compare_cli(tmp_path, server, "--estimate")
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert server.requests == []
    # Two orders, two judges, four pairs; pair 4's two orders are one request.
    assert re.search(r"^total\s+14\s", printed.out, re.MULTILINE), printed.out


def test_judge_options_without_judge_and_a_missing_judge_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    baseline, candidate = write_runs(tmp_path)
    code = main(["compare", str(baseline), str(candidate), "--criterion", "Be brief."])
    assert code == 2 and "--criterion goes with --judge pairwise" in capsys.readouterr().err
    code = main(["compare", str(baseline), str(candidate), "--judge", "pairwise"])
    printed = capsys.readouterr()
    assert code == 2 and "--judge pairwise need(s) a judge model" in printed.err
    assert printed.out == ""  # refused before anything is compared


@pytest.mark.parametrize(
    ("short", "long"),
    [
        ("4.", "The sum of 2 and 2 is 4."),
        ("Четыре.", "Сумма двух и двух равна четырём."),
        ("四。", "二加二的和等于四，这是基本的算术。"),
    ],
)
def test_the_toy_judge_prefers_the_shorter_answer_under_a_brevity_criterion(
    server: LocalOpenAIServer, short: str, long: str
) -> None:
    metric = PairwisePreference(llm=judge(server), criterion="The more concise answer.")
    assert metric.score(response_a=short, response_b=long) == pytest.approx(1.0)
    assert metric.score(response_a=long, response_b=short) == pytest.approx(0.0)
    assert metric.score(response_a=short, response_b=short) == pytest.approx(0.5)


def test_compare_with_a_failing_judge_reports_it_and_keeps_the_other(
    tmp_path: Path, server: LocalOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server.faults = lambda info: "500" if info.model == "judge-b" else None
    code, stats = compare_cli(tmp_path, server, "--max-consecutive-failures", "1000")
    printed = capsys.readouterr()
    assert code == 0, printed.err
    report = stats["pairwise_preference"]
    # judge-b is left out of every pair; judge-a alone decides, as in the first test.
    assert (report["candidate_wins"], report["candidate_losses"], report["ties"]) == (2, 1, 1)
    assert report["position_bias"] == {"judge-a": 0.0}
    assert report["errors"] == 0
    assert server.model_counts["judge-b"] >= 7  # both orders of every pair were tried


def test_compare_when_every_judge_fails_counts_the_pairs_as_errors(
    tmp_path: Path, server: LocalOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server.faults = "500"
    code, stats = compare_cli(tmp_path, server, "--max-consecutive-failures", "1000")
    printed = capsys.readouterr()
    assert code == 3, printed.err
    report = stats["pairwise_preference"]
    assert report["errors"] == 4 and report["judged"] == 0 and report["win_rate"] is None
    assert "judges failed: 4" in printed.out


def test_a_whole_custom_template_is_what_the_judge_receives(server: LocalOpenAIServer) -> None:
    template = ChatPromptTemplate(
        [
            ("system", "Compare strictly."),
            ("human", "Criterion: {criterion}\nFirst: {answer_a}\nSecond: {answer_b}"),
        ]
    )
    metric = PairwisePreference(llm=judge(server), prompts={"judge_pairwise": template})
    result = metric.invoke({"response_a": "Paris.", "response_b": "Lyon."})
    assert result.usage["judge-a"].requests == 2
    sent = [entry.body["messages"] for entry in chat_requests(server)]
    assert all(messages[0]["content"] == "Compare strictly." for messages in sent)
    users = sorted(messages[-1]["content"] for messages in sent)
    assert users[0].startswith("Criterion: <criterion>") and "First: <answer_a>" in users[0]
    assert {"Paris." in users[0].split("Second:")[0], "Paris." in users[1].split("Second:")[0]} == {
        True,
        False,
    }
