"""A metric is one module plus one registry line; the built-in aspects are named ``aspect``.

The first part of this file is the whole of a metric of our own, ReferenceSupport (the
share of the response's claims the reference supports, neutral verdicts given a partial
credit), as a user would write it: its details model, its class and its registry line.
Nothing else in the package names it, yet the CLI (``--metric``, its setting's flag, the
config, the report, resume), the cost estimate and the LangSmith evaluators all offer it.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar, Literal

import pytest
from langchain_core.runnables import RunnableConfig
from langchain_openai import ChatOpenAI
from pydantic import Field
from support import fact_judge, local_models, write_models_yaml

from langchain_answer_metrics.cli.command import build_parser, main
from langchain_answer_metrics.cli.command_options import EvaluateOptions, options_of
from langchain_answer_metrics.cli.options import UsageError
from langchain_answer_metrics.cli.plans import MetricPlans, build_metrics
from langchain_answer_metrics.cli.records import metric_record
from langchain_answer_metrics.cli.run_checks import result_keys
from langchain_answer_metrics.core.result import (
    ClaimSide,
    ClaimVerdictDetail,
    DetailsModel,
    MetricResult,
    details_model,
)
from langchain_answer_metrics.core.sample import Sample, SampleField
from langchain_answer_metrics.judging.judges import Judge, as_judges
from langchain_answer_metrics.judging.panel import ModelOutcome
from langchain_answer_metrics.judging.steps import claims_checked
from langchain_answer_metrics.metrics import ASPECTS, AspectCritic
from langchain_answer_metrics.metrics.base import JudgedMetric
from langchain_answer_metrics.metrics.registry import (
    METRIC_NAMES,
    METRICS,
    MetricEntry,
    MetricModels,
    MetricSetting,
    register,
    unit_interval,
)
from langchain_answer_metrics.run.summary import has_no_claims, summarize
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

# --------------------------------------------------------------------------- the metric


class ReferenceSupportModelDetails(DetailsModel):
    response_claims: list[ClaimVerdictDetail]
    supported: int
    neutral: int
    total: int
    # ["response"]: an abstention, flagged as the built-in metrics flag theirs.
    no_claims: list[ClaimSide] = Field(default_factory=list)

    def claims_by_side(self) -> dict[ClaimSide, list[ClaimVerdictDetail]]:
        """Said by side, the claims go to --out and the report like the built-in ones."""
        return {"response": self.response_claims}


class ReferenceSupportDetails(DetailsModel):
    kind: Literal["reference_support"] = "reference_support"
    neutral_credit: float
    models: dict[str, ReferenceSupportModelDetails]


class ReferenceSupport(JudgedMetric):
    """(supported + neutral_credit * neutral) / claims, the claims checked against the reference."""

    metric_key: ClassVar[str] = "reference_support"
    required_fields: ClassVar[tuple[SampleField, ...]] = ("response", "reference")
    prompt_steps: ClassVar[tuple[str, ...]] = ("decompose_claims", "verify_claims")
    neutral_credit: float = 0.0
    abstention_credit: float | None = None  # None: a response with no claims is not applicable

    async def _score_with(
        self, judge: Judge, sample: Sample, config: RunnableConfig
    ) -> ModelOutcome:
        assert sample.response is not None and sample.reference is not None
        verdicts, usage = await claims_checked(
            judge,
            sample.response,
            [sample.reference],
            question=sample.user_input,
            side="response",
            config=config,
            prompts=self._step_prompts(),
        )
        counts = {
            kind: sum(v.verdict == kind for v in verdicts) for kind in ("supported", "neutral")
        }
        score = (
            (counts["supported"] + self.neutral_credit * counts["neutral"]) / len(verdicts)
            if verdicts
            else self.abstention_credit
        )
        details = ReferenceSupportModelDetails(
            response_claims=verdicts,
            **counts,
            total=len(verdicts),
            no_claims=[] if verdicts else ["response"],
        )
        return ModelOutcome(score, details.model_dump(), f"{counts} of {len(verdicts)}", usage)

    def _details(self, models: dict[str, dict[str, Any]]) -> ReferenceSupportDetails:
        return ReferenceSupportDetails(neutral_credit=self.neutral_credit, models=models)


NEUTRAL_CREDIT = MetricSetting(
    "neutral_credit",
    help="reference_support's credit for a neutral claim (0-1)",
    metavar="X",
    parse=unit_interval,
    default=0.0,
)

# The one registry line (a built-in metric's is an entry of registry._ENTRIES).
ENTRY = MetricEntry(
    ReferenceSupport,
    lambda models, settings: ReferenceSupport(
        llm=list(models.judges), neutral_credit=settings["neutral_credit"]
    ),
    settings=(NEUTRAL_CREDIT,),
    signature={"neutral_credit": "neutral_credit"},
)


# --------------------------------------------------------------------------- what it gets

KEY_ENV = "ANSWER_METRICS_TEST_PLUGIN_KEY"
ROWS = [
    {
        "id": "a",
        "question": "Where was Einstein born?",
        "answer": "Einstein was born in Spain in 1879.",
        "ground_truth": "Einstein was born in Germany in 1879.",
    },
    {
        "id": "b",
        "question": "What is the capital of France?",
        "answer": "Paris is the capital of France.",
        "ground_truth": "The capital of France is Paris.",
    },
]


ROWS_AS_SAMPLES = [
    {"user_input": row["question"], "response": row["answer"], "reference": row["ground_truth"]}
    for row in ROWS
]


@pytest.fixture
def registered() -> Iterator[MetricEntry]:
    # Registered for the test only: tests/test_registry.py counts the built-in metrics.
    register(ENTRY)
    try:
        yield ENTRY
    finally:
        del METRICS[ENTRY.key]


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "qa.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in ROWS), "utf-8")
    return path


@pytest.fixture
def models(tmp_path: Path, server: LocalOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("OPENAI_API_KEY", "LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(KEY_ENV, "sk-test-plugin")
    return write_models_yaml(tmp_path, local_models(server, KEY_ENV))


def run(*args: str | Path) -> int:
    return main([str(arg) for arg in args])


def test_the_registry_line_offers_it_to_the_cli(registered: MetricEntry) -> None:
    assert "reference_support" in METRIC_NAMES
    parser = build_parser()
    args = parser.parse_args(
        ["evaluate", "d.jsonl", "--metric", "reference-support", "--neutral-credit", "0.5"]
    )
    assert args.neutral_credit == 0.5
    with pytest.raises(SystemExit):
        parser.parse_args(["evaluate", "d.jsonl", "--neutral-credit", "2"])  # parsed as declared
    assert details_model("reference_support") is ReferenceSupportDetails


def test_the_cli_scores_reports_and_resumes_it(
    registered: MetricEntry,
    data: Path,
    models: Path,
    tmp_path: Path,
    server: LocalOpenAIServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out, report = tmp_path / "results.jsonl", tmp_path / "report.html"
    command = [
        "evaluate",
        data,
        "--metric",
        "reference-support",
        "--config",
        models,
        "--out",
        out,
        "--report",
        report,
        "--quiet",
    ]
    assert run(*command) == 0, capsys.readouterr().err
    lines = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    scored = {line["id"]: line["metrics"]["reference_support"] for line in lines}
    assert set(scored) == {"a", "b"}
    assert scored["b"]["kind"] == "reference_support" and scored["b"]["score"] == 1.0
    assert 0.0 <= scored["a"]["score"] < 1.0  # "Spain" is not in the reference
    claims = {claim["claim"]: claim for claim in scored["a"]["claims"]}
    assert claims and {claim["model"] for claim in claims.values()} == {"judge-a"}
    unsupported = [text for text, claim in claims.items() if claim["verdict"] != "supported"]
    assert any("Spain" in text for text in unsupported)
    page = report.read_text("utf-8")
    assert "reference_support" in page and unsupported[0] in page
    requests = server.chat_requests
    assert requests > 0
    capsys.readouterr()

    assert run(*command) == 0  # resumed: nothing scored twice
    assert server.chat_requests == requests
    assert "resuming: 2 samples already scored" in capsys.readouterr().err

    assert run(*command, "--neutral-credit", "0.5") == 0  # a setting in its signature
    assert server.chat_requests > requests  # changed: scored again


def test_the_estimate_counts_it(
    registered: MetricEntry,
    data: Path,
    models: Path,
    tmp_path: Path,
    server: LocalOpenAIServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "estimate.json"
    assert (
        run(
            "evaluate",
            data,
            "--metric",
            "reference_support",
            "--config",
            models,
            "--estimate",
            "--json",
            path,
        )
        == 0
    ), capsys.readouterr().err
    assert server.chat_requests == 0
    estimated = json.loads(path.read_text("utf-8"))
    assert estimated["judge-a"]["requests"] == 4  # decompose and verify, for each row


def test_its_results_round_trip_and_it_is_a_langsmith_evaluator(
    server: LocalOpenAIServer,
) -> None:
    judge = ChatOpenAI(
        base_url=server.base_url, api_key="sk-test", model="judge-a", use_responses_api=False
    )
    metric = ReferenceSupport(llm=judge)
    result = metric.invoke(
        {
            "response": "Paris is the capital of France.",
            "reference": "The capital of France is Paris.",
        }
    )
    assert isinstance(result.details, ReferenceSupportDetails)
    again = MetricResult.model_validate_json(result.model_dump_json())
    assert again == result and isinstance(again.details, ReferenceSupportDetails)
    evaluate = metric.as_function_evaluator()
    scored = evaluate(
        outputs={"answer": "Paris is the capital of France."},
        reference_outputs={"answer": "The capital of France is Paris."},
    )
    assert (scored["key"], scored["score"]) == ("reference_support", 1.0)
    assert type(metric.as_evaluator()).__name__ == "MetricEvaluator"


ABSTAINED = {"response": "I don't know.", "reference": "The capital of France is Paris."}


def test_its_abstentions_are_counted_like_the_built_ins() -> None:
    # Nothing in the package names reference_support: summaries, records and the CLI
    # read the abstention from the result (not_applicable, the per-model no_claims flag).
    judge = fact_judge(claims={"I don't know.": []})
    left_out = ReferenceSupport(llm=judge).invoke(ABSTAINED)
    assert left_out.score is None and left_out.not_applicable == "no_claims"
    credited = ReferenceSupport(llm=judge, abstention_credit=1.0).invoke(ABSTAINED)
    assert credited.score == 1.0 and credited.not_applicable is None
    answered = ReferenceSupport(llm=judge).invoke(ROWS_AS_SAMPLES[1])
    assert answered.score == 1.0
    for result in (left_out, credited):
        assert has_no_claims(result) and metric_record(result).no_claims
        again = MetricResult.model_validate_json(result.model_dump_json())
        assert has_no_claims(again)  # read back from JSON (--out, checkpoint=)
    assert not has_no_claims(answered) and not metric_record(answered).no_claims

    summary = summarize("reference_support", [left_out, answered])
    assert (summary.scored, summary.not_applicable, summary.no_claims) == (1, 1, 1)
    summary = summarize("reference_support", [credited, answered])
    assert (summary.scored, summary.not_applicable, summary.no_claims) == (2, 0, 1)


def test_a_kind_is_one_model() -> None:
    with pytest.raises(TypeError, match="already"):

        class Another(DetailsModel):
            kind: Literal["reference_support"] = "reference_support"


BASE = ["evaluate", "d.jsonl", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"]


# --------------------------------------------------------------------------- aspect=


def test_a_built_in_aspect_is_named_by_aspect() -> None:
    entry = METRICS["aspect_critic"]
    models = MetricModels(judges=as_judges(fact_judge()))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no deprecation on the new spelling
        metric = entry.build(models, {"aspect": "coherence"})
        own = entry.build(models, {"criterion": "The answer cites a year."})
    assert isinstance(metric, AspectCritic)
    assert (metric.key, metric.criterion) == ("coherence", ASPECTS["coherence"])
    assert (own.key, own.criterion) == ("aspect_critic", "The answer cites a year.")


def test_criterion_naming_an_aspect_still_works_but_is_deprecated() -> None:
    entry = METRICS["aspect_critic"]
    models = MetricModels(judges=as_judges(fact_judge()))
    with pytest.warns(DeprecationWarning, match=r"use aspect='coherence'"):
        metric = entry.build(models, {"criterion": "coherence"})
    assert (metric.key, metric.criterion) == ("coherence", ASPECTS["coherence"])


def _plans(argv: list[str], names: list[str]) -> MetricPlans:
    """The metrics the command builds for ``argv``, from its typed options."""
    options = options_of(build_parser().parse_args(argv))
    assert isinstance(options, EvaluateOptions)
    return build_metrics(names, metrics=options.metrics, judges=options.judges)


def test_the_cli_takes_aspect_and_refuses_both_or_neither() -> None:
    parse = build_parser().parse_args
    named = [*BASE, "--aspect", "harmlessness"]
    settings = options_of(parse(named)).metrics.settings  # type: ignore[union-attr]
    assert result_keys(["aspect_critic"], METRICS, settings) == ["harmlessness"]
    (plan,) = _plans(named, ["aspect_critic"])
    assert plan.metric.criterion == ASPECTS["harmlessness"]
    # The fingerprint depends on the criterion text, however it was named.
    with pytest.warns(DeprecationWarning):
        (old,) = _plans([*BASE, "--criterion", "harmlessness"], ["aspect_critic"])
    assert old.signature == plan.signature
    with pytest.raises(UsageError, match=r"built-in aspect \('harmlessness'\) or a criterion"):
        _plans([*BASE, "--aspect", "harmlessness", "--criterion", "X"], ["aspect_critic"])
    with pytest.raises(UsageError, match=r"^aspect_critic needs --criterion TEXT .* --aspect "):
        _plans(BASE, ["aspect_critic"])
    with pytest.raises(SystemExit):
        parse([*BASE, "--aspect", "politeness"])  # not a built-in aspect
