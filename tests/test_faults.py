"""Behaviour under provider faults, through the real HTTP path.

Every panel here is built by ``load_config`` from a YAML file pointing at the local
OpenAI-compatible server, so requests go ChatOpenAI / OpenAIEmbeddings -> openai client ->
HTTP -> server, and every assertion about retries and re-asks counts what the server saw.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support import REASK_MARK, local_models, write_models_yaml

from langchain_answer_metrics import (
    AllModelsFailedError,
    AnswerCorrectness,
    AnswerMetric,
    AspectCritic,
    FactualCorrectness,
    Faithfulness,
    InvalidSampleError,
    MetricResult,
    ModelFailure,
    SemanticSimilarity,
)
from langchain_answer_metrics.config import Panel, load_config
from langchain_answer_metrics.core.sample import SampleLike
from langchain_answer_metrics.run.runner import MetricError, Progress, SampleResults, evaluate
from langchain_answer_metrics.run.summary import summarize
from langchain_answer_metrics.testing.openai_server import (
    FAULT_KINDS,
    Fault,
    FaultKind,
    FaultPolicy,
    LocalOpenAIServer,
    LoggedRequest,
    RequestInfo,
    on_attempts,
    random_faults,
)

KEY_ENV = "ANSWER_METRICS_FAULTS_TEST_KEY"
FAKE_KEY = "sk-test-faults-0f1e2d3c"
JUDGES = ("judge-a", "judge-b")
MAX_ATTEMPTS = 3
CHAT = "/chat/completions"
EMBEDDINGS = "/embeddings"

DATED = {"response": "The Eiffel Tower was finished in 1889. It stands in Paris."}
EIFFEL = {
    "user_input": "When was the Eiffel Tower finished?",
    "response": "The Eiffel Tower was finished in 1889. It stands in Paris.",
    "reference": "The Eiffel Tower was finished in 1889. It stands in Paris, France.",
    "retrieved_contexts": ["The Eiffel Tower was finished in 1889 and stands in Paris."],
}


def write_config(
    directory: Path,
    server: LocalOpenAIServer,
    *,
    timeout: float = 30.0,
    judge_b_timeout: float | None = None,
    retry_codes: Sequence[int] = (429, 500),
    temperature: float = 0.0,
) -> Path:
    """A models.yaml for the local server: two judges, one embedder, 10 ms backoff.

    ``judge_b_timeout`` puts judge-b on a second provider (same server) with its own
    timeout, so a deliberately slow judge-b cannot make judge-a time out on a busy machine.
    """
    config = local_models(
        server,
        KEY_ENV,
        judges=JUDGES,
        max_attempts=MAX_ATTEMPTS,
        timeout=timeout,
        retry_codes=retry_codes,
        temperature=temperature,
    )
    if judge_b_timeout is not None:
        config["providers"]["strict"] = {**config["providers"]["local"], "timeout": judge_b_timeout}
        config["chat_models"]["list"][1]["provider"] = "strict"
    return write_models_yaml(directory, config)


# --------------------------------------------------------------------------- fixtures

MakePanel = Callable[..., Panel]


@pytest.fixture
def make_panel(
    server: LocalOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> MakePanel:
    """Build a panel from a config file written for ``server`` (options: see write_config)."""
    monkeypatch.setenv(KEY_ENV, FAKE_KEY)

    def make(**options: Any) -> Panel:
        return load_config(write_config(tmp_path, server, **options))

    return make


# --------------------------------------------------------------------------- helpers


def log_of(
    server: LocalOpenAIServer, model: str | None = None, path: str = CHAT
) -> list[LoggedRequest]:
    return [
        entry
        for entry in server.requests
        if entry.path.endswith(path) and (model is None or entry.model == model)
    ]


def last_message(entry: LoggedRequest) -> str:
    return str(entry.body["messages"][-1]["content"])


def only_failure(result: MetricResult) -> ModelFailure:
    assert len(result.excluded) == 1, result.excluded
    return result.excluded[0]


def critic(panel: Panel, **options: Any) -> AspectCritic:
    return AspectCritic(
        llm=panel.judges,
        name="has_year",
        criterion="The response must contain a year.",
        **options,
    )


def for_model(model: str, fault: Fault | FaultKind) -> FaultPolicy:
    return lambda info: fault if info.model == model else None


def assert_carried_by_judge_a(result: MetricResult, clean: MetricResult) -> None:
    """judge-b is out; judge-a's own score, unchanged, is the score."""
    assert result.per_model == {"judge-a": clean.per_model["judge-a"]}
    assert result.score == clean.per_model["judge-a"]


# --------------------------------------------------------------------------- retries


def test_429_with_retry_after_is_retried_until_it_succeeds(
    server: LocalOpenAIServer, make_panel: MakePanel
) -> None:
    metric = critic(make_panel())
    clean = metric.invoke(DATED)
    server.reset()
    # Two 429s per request, then success: the third and last attempt of the budget.
    server.faults = on_attempts(Fault("429", retry_after=0), attempts=(0, 1))

    result = metric.invoke(DATED)

    for model in JUDGES:
        assert [(entry.status, entry.attempt) for entry in log_of(server, model)] == [
            (429, 0),
            (429, 1),
            (200, 2),
        ]
    assert result.excluded == []
    assert result.per_model == clean.per_model
    assert result.score == clean.score


def test_500_is_retried_for_every_request_of_a_metric(
    server: LocalOpenAIServer, make_panel: MakePanel
) -> None:
    metric = FactualCorrectness(llm=make_panel().judges)
    clean = metric.invoke(EIFFEL)
    server.reset()
    server.faults = on_attempts("500")

    result = metric.invoke(EIFFEL)

    for model in JUDGES:
        log = log_of(server, model)
        # Two decompositions and two verifications, each failed once and then answered.
        assert sorted((entry.attempt, entry.status) for entry in log) == (
            [(0, 500)] * 4 + [(1, 200)] * 4
        )
    assert result.excluded == []
    assert result.score == clean.score


def test_embedding_requests_are_retried_too(
    server: LocalOpenAIServer, make_panel: MakePanel
) -> None:
    metric = SemanticSimilarity(embeddings=make_panel().embedders)
    clean = metric.invoke(EIFFEL)
    server.reset()
    server.faults = on_attempts("500")

    result = metric.invoke(EIFFEL)

    assert [(e.status, e.attempt) for e in log_of(server, path=EMBEDDINGS)] == [
        (500, 0),
        (200, 1),
    ]
    assert result.excluded == []
    assert result.score == clean.score


def test_a_model_still_rate_limited_after_the_budget_is_excluded(
    server: LocalOpenAIServer, make_panel: MakePanel
) -> None:
    metric = critic(make_panel())
    clean = metric.invoke(DATED)
    server.reset()
    server.faults = for_model("judge-b", Fault("429", retry_after=0))

    result = metric.invoke(DATED)

    assert [entry.status for entry in log_of(server, "judge-b")] == [429] * MAX_ATTEMPTS
    assert [entry.status for entry in log_of(server, "judge-a")] == [200]
    failure = only_failure(result)
    assert (failure.model, failure.step) == ("judge-b", "judge_aspect")
    assert "RateLimitError" in failure.error_type
    assert "429" in failure.error
    assert_carried_by_judge_a(result, clean)


def test_a_model_failing_with_500_is_excluded_at_the_failing_step(
    server: LocalOpenAIServer, make_panel: MakePanel
) -> None:
    metric = FactualCorrectness(llm=make_panel().judges)
    clean = metric.invoke(EIFFEL)
    server.reset()
    server.faults = for_model("judge-b", "500")

    result = metric.invoke(EIFFEL)

    # Both decompositions are tried MAX_ATTEMPTS times; nothing is verified after them.
    assert [entry.status for entry in log_of(server, "judge-b")] == [500] * (2 * MAX_ATTEMPTS)
    failure = only_failure(result)
    assert (failure.model, failure.step) == ("judge-b", "decompose_claims")
    assert "500" in failure.error
    assert_carried_by_judge_a(result, clean)


def test_a_client_error_is_not_retried(server: LocalOpenAIServer, make_panel: MakePanel) -> None:
    metric = critic(make_panel())
    clean = metric.invoke(DATED)
    server.reset()
    server.faults = for_model("judge-b", Fault("500", status=401))

    result = metric.invoke(DATED)

    assert [entry.status for entry in log_of(server, "judge-b")] == [401]
    failure = only_failure(result)
    assert "AuthenticationError" in failure.error_type
    assert_carried_by_judge_a(result, clean)


def test_every_model_failing_raises_with_each_failure_listed(
    server: LocalOpenAIServer, make_panel: MakePanel
) -> None:
    metric = critic(make_panel())
    server.faults = "500"

    with pytest.raises(AllModelsFailedError) as caught:
        metric.invoke(DATED)

    error = caught.value
    assert [(f.model, f.step) for f in error.failures] == [
        ("judge-a", "judge_aspect"),
        ("judge-b", "judge_aspect"),
    ]
    assert "judge-a failed at judge_aspect" in str(error)
    assert "judge-b failed at judge_aspect" in str(error)
    assert len(log_of(server)) == 2 * MAX_ATTEMPTS

    # The dataset runner reports the same failure as an explicit entry instead of raising.
    server.reset()
    [row] = evaluate([DATED], [metric])
    entry = row.results["has_year"]
    assert isinstance(entry, MetricError)
    assert entry.error_type == "AllModelsFailedError"
    assert "judge-a failed" in entry.message and "judge-b failed" in entry.message


def test_a_failing_embedder_is_reported_at_the_embed_step(
    server: LocalOpenAIServer, make_panel: MakePanel
) -> None:
    metric = SemanticSimilarity(embeddings=make_panel().embedders)
    server.faults = "500"

    with pytest.raises(AllModelsFailedError) as caught:
        metric.invoke(EIFFEL)

    assert [(f.model, f.step) for f in caught.value.failures] == [("embed-a", "embed")]
    assert len(log_of(server, path=EMBEDDINGS)) == MAX_ATTEMPTS


# --------------------------------------------------------------------------- re-asks


@pytest.mark.parametrize("kind", ["malformed_json", "wrong_shape", "truncated"])
def test_malformed_output_is_reasked_a_bounded_number_of_times(
    kind: FaultKind, server: LocalOpenAIServer, make_panel: MakePanel
) -> None:
    panel = make_panel()
    metric = critic(panel)
    clean = metric.invoke(DATED)
    server.reset()
    server.faults = for_model("judge-b", kind)

    result = metric.invoke(DATED)

    reasks = panel.judges[1].max_reasks
    log = log_of(server, "judge-b")
    assert len(log) == reasks + 1
    assert all(entry.fault == kind and entry.status == 200 for entry in log)
    # The first request is the prompt; each later one adds the re-ask with the problem.
    assert [REASK_MARK in last_message(entry) for entry in log] == [False] + [True] * reasks
    failure = only_failure(result)
    assert (failure.model, failure.step) == ("judge-b", "judge_aspect")
    assert failure.error_type == "StructuredOutputError"
    assert f"after {reasks + 1} attempts" in failure.error
    assert_carried_by_judge_a(result, clean)


def test_a_short_verdict_list_is_reasked_and_never_trimmed(
    server: LocalOpenAIServer, make_panel: MakePanel
) -> None:
    panel = make_panel()
    metric = Faithfulness(llm=panel.judges)
    clean = metric.invoke(EIFFEL)
    server.reset()
    server.faults = for_model("judge-b", "short_verdicts")

    result = metric.invoke(EIFFEL)

    reasks = panel.judges[1].max_reasks
    # One decomposition (the fault does not apply to it), then the bounded verifications.
    assert [entry.fault for entry in log_of(server, "judge-b")] == (
        [None] + ["short_verdicts"] * (reasks + 1)
    )
    failure = only_failure(result)
    assert (failure.model, failure.step) == ("judge-b", "verify_claims")
    assert failure.error_type == "StructuredOutputError"
    assert_carried_by_judge_a(result, clean)


def test_one_bad_reply_is_recovered_by_a_single_reask(
    server: LocalOpenAIServer, make_panel: MakePanel
) -> None:
    metric = critic(make_panel())
    clean = metric.invoke(DATED)
    server.reset()

    def first_reply_broken(info: RequestInfo) -> FaultKind | None:
        is_reask = REASK_MARK in str(info.messages[-1].get("content"))
        return "malformed_json" if info.model == "judge-b" and not is_reask else None

    server.faults = first_reply_broken

    result = metric.invoke(DATED)

    assert [entry.fault for entry in log_of(server, "judge-b")] == ["malformed_json", None]
    assert result.excluded == []
    assert result.per_model == clean.per_model


def test_reasks_for_several_votes_in_one_request_are_bounded(
    server: LocalOpenAIServer, make_panel: MakePanel
) -> None:
    panel = make_panel(temperature=0.7)
    metric = critic(panel, strictness=3)
    server.faults = for_model("judge-b", "malformed_json")

    result = metric.invoke(DATED)

    log = log_of(server, "judge-b")
    assert len(log) == panel.judges[1].max_reasks + 1
    assert all(entry.body.get("n") == 3 for entry in log)  # all three votes, every time
    failure = only_failure(result)
    assert failure.error_type == "StructuredOutputError"
    assert result.details["models"]["judge-a"]["votes"] == ["PASS"] * 3


# --------------------------------------------------------------------------- timeouts


@pytest.mark.parametrize(
    ("retry_codes", "requests"),
    [
        ((429,), 1),  # a timeout is not a 429: no retry
        ((429, 500), MAX_ATTEMPTS),  # 5xx codes retry connection errors, timeouts included
    ],
)
def test_a_reply_slower_than_the_timeout_fails_that_model_cleanly(
    retry_codes: tuple[int, ...],
    requests: int,
    server: LocalOpenAIServer,
    make_panel: MakePanel,
) -> None:
    metric = critic(make_panel(judge_b_timeout=0.25, retry_codes=retry_codes))
    server.faults = for_model("judge-b", Fault("slow", delay=2.0))

    result = metric.invoke(DATED)

    assert [entry.fault for entry in log_of(server, "judge-b")] == ["slow"] * requests
    failure = only_failure(result)
    assert (failure.model, failure.step) == ("judge-b", "judge_aspect")
    assert "Timeout" in failure.error_type
    assert list(result.per_model) == ["judge-a"]


# --------------------------------------------------------------------------- batches

# 100 samples at 32 in flight: three times the window, so samples finish out of order
# and a lost or misplaced one would show; thousands of requests, a fifth of them faulted,
# every kind many times over. (200 samples proved nothing more, at 2.4 times the CPU.)
N_SAMPLES = 100
# The fault-free runs repeat the first half (poisoned and invalid samples included): the
# faulted run's scores are compared with it.
N_REPEAT = 50
POISON = "POISON-7Q"
POISONED = frozenset({5, 51, 88})  # every chat request about them fails with 500
JUDGE_B_DOWN = "B-DOWN-3K"
# In the faulted run, every request judge-b gets about them fails with 500: judge-b is
# left out of their judged metrics, judge-a carries them (a judge failing for good, for
# sure; the random faults only rarely fault all three attempts of one request).
JUDGE_B_DOWN_FOR = frozenset({17, 77})
BLANK_RESPONSE = frozenset({7, 42})  # invalid for every metric
NO_CONTEXTS = frozenset({11, 63})  # invalid for Faithfulness only
CITIES = ("Paris", "Berlin", "Madrid", "Rome", "Vienna", "Lisbon", "Prague", "Oslo")
STEPS = {"decompose_claims", "verify_claims", "judge_aspect", "embed"}


def make_sample(i: int) -> dict[str, Any]:
    """A distinct sample per index; claims mention "fair number {i}" so order is checkable."""
    city, year = CITIES[i % len(CITIES)], 1700 + i
    marker = f" {POISON} was here." if i in POISONED else ""
    marker += f" {JUDGE_B_DOWN} was here." if i in JUDGE_B_DOWN_FOR else ""
    return {
        "user_input": f"What happened in {city} in {year}?",
        "response": "   "
        if i in BLANK_RESPONSE
        else (
            f"{city} hosted fair number {i} in {year}. "
            f"The fair number {i} had {i % 7 + 3} pavilions.{marker}"
        ),
        "reference": (
            f"{city} hosted fair number {i} in {year}. "
            f"The fair number {i} had {i % 5 + 3} pavilions and {i % 3 + 1} bridges.{marker}"
        ),
        "retrieved_contexts": []
        if i in NO_CONTEXTS
        else [
            f"In {year}, {city} hosted fair number {i}.",
            f"The fair number {i} had {i % 7 + 3} pavilions.",
        ],
    }


SAMPLES: list[SampleLike] = [make_sample(i) for i in range(N_SAMPLES)]


def five_metrics(panel: Panel) -> list[AnswerMetric]:
    return [
        SemanticSimilarity(embeddings=panel.embedders),
        FactualCorrectness(llm=panel.judges),
        AnswerCorrectness(llm=panel.judges, embeddings=panel.embedders),
        critic(panel),
        Faithfulness(llm=panel.judges),
    ]


KEYS = (
    "semantic_similarity",
    "factual_correctness",
    "answer_correctness",
    "has_year",
    "faithfulness",
)
JUDGED = frozenset(KEYS) - {"semantic_similarity"}


def poisoned_then(policy: FaultPolicy, *, judge_b_down: bool = False) -> FaultPolicy:
    """Fail every chat request about a poisoned sample (and, if ``judge_b_down``, judge-b's
    about a sample of JUDGE_B_DOWN_FOR); otherwise defer to ``policy``."""

    def faults(info: RequestInfo) -> Fault | FaultKind | None:
        body = json.dumps(info.body, ensure_ascii=False)
        if info.mode != "embeddings" and POISON in body:
            return "500"
        if judge_b_down and info.model == "judge-b" and JUDGE_B_DOWN in body:
            return "500"
        return policy(info)

    return faults


@dataclass
class Run:
    rows: list[SampleResults]
    progress: list[Progress]
    requests: int
    fault_counts: Counter[str]


def run_all(
    directory: Path, server: LocalOpenAIServer, samples: list[SampleLike], **options: Any
) -> Run:
    """``samples`` through the five metrics, with a panel freshly loaded from config."""
    server.reset()
    progress: list[Progress] = []
    rows = evaluate(
        samples,
        five_metrics(load_config(write_config(directory, server, **options))),
        max_concurrency=32,
        on_progress=progress.append,
    )
    return Run(rows, progress, len(server.requests), Counter(server.fault_counts))


@pytest.fixture(scope="module")
def batch_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, LocalOpenAIServer]]:
    with pytest.MonkeyPatch.context() as patch, LocalOpenAIServer() as server:
        patch.setenv(KEY_ENV, FAKE_KEY)
        yield tmp_path_factory.mktemp("batch"), server


@pytest.fixture(scope="module")
def clean_runs(batch_env: tuple[Path, LocalOpenAIServer]) -> tuple[Run, Run]:
    """The same run twice, without faults (poisoned samples excepted)."""
    directory, server = batch_env
    server.faults = poisoned_then(lambda info: None)
    samples = SAMPLES[:N_REPEAT]
    return run_all(directory, server, samples), run_all(directory, server, samples)


@pytest.fixture(scope="module")
def faulted_run(batch_env: tuple[Path, LocalOpenAIServer]) -> Run:
    """About 20% of requests faulted with every kind, seeded; slow replies time out.

    The deadline leaves room for a loaded machine: the server shares the test's process,
    and at a load of 5 on 2 cores a 2 s deadline timed out clean replies too, 20 in a row,
    which the circuit breaker rightly took for a dead endpoint."""
    directory, server = batch_env
    faults = random_faults(0.2, FAULT_KINDS, seed=2024, delay=10.0)
    server.faults = poisoned_then(faults, judge_b_down=True)
    return run_all(directory, server, SAMPLES, timeout=8.0)


def scores(run: Run) -> list[dict[str, Any]]:
    """Per sample and metric: (score, per-model scores), or the error type."""
    return [
        {
            key: (outcome.score, outcome.per_model)
            if isinstance(outcome, MetricResult)
            else outcome.error_type
            for key, outcome in row.results.items()
        }
        for row in run.rows
    ]


def non_finite_floats(value: Any, path: str = "") -> list[str]:
    """Paths of every NaN or infinite float inside ``value`` (dicts and lists walked)."""
    if isinstance(value, float):
        return [] if math.isfinite(value) else [path]
    items: list[tuple[str, Any]] = []
    if isinstance(value, dict):
        items = [(f"{path}.{key}", item) for key, item in value.items()]
    elif isinstance(value, (list, tuple)):
        items = [(f"{path}[{i}]", item) for i, item in enumerate(value)]
    return [bad for where, item in items for bad in non_finite_floats(item, where)]


def assert_complete_and_ordered(run: Run) -> None:
    assert [row.index for row in run.rows] == list(range(len(run.rows)))
    for i, row in enumerate(run.rows):
        assert tuple(row.results) == KEYS
        for outcome in row.results.values():
            assert isinstance(outcome, (MetricResult, MetricError))
        # The row really is sample i: its claims name "fair number i" and no other.
        for key in ("factual_correctness", "faithfulness"):
            outcome = row.results[key]
            if isinstance(outcome, MetricResult):
                details = outcome.model_dump_json(include={"details"})
                numbers = set(re.findall(r"fair number (\d+)", details))
                assert numbers == {str(i)}, (i, key, numbers)


def expected_error(i: int, key: str) -> str | None:
    if i in BLANK_RESPONSE or (i in NO_CONTEXTS and key == "faithfulness"):
        return "InvalidSampleError"
    if i in POISONED and key in JUDGED:
        return "AllModelsFailedError"
    return None


@pytest.mark.slow  # three runs of 50 to 100 samples, five metrics, three models
def test_repeat_without_faults_gives_identical_scores(clean_runs: tuple[Run, Run]) -> None:
    first, second = clean_runs
    for run in (first, second):
        assert len(run.rows) == N_REPEAT
        assert_complete_and_ordered(run)
        assert run.fault_counts == Counter({"500": run.fault_counts["500"]})  # poison only
    assert scores(first) == scores(second)
    assert len({str(sample["factual_correctness"]) for sample in scores(first)}) > 3
    for i, row in enumerate(first.rows):
        for key, outcome in row.results.items():
            expected = expected_error(i, key)
            if expected is None:
                assert isinstance(outcome, MetricResult) and outcome.excluded == [], (i, key)
            else:
                assert isinstance(outcome, MetricError) and outcome.error_type == expected


@pytest.mark.slow  # three runs of 50 to 100 samples, five metrics, three models
def test_batch_under_faults_loses_no_sample_and_keeps_order(faulted_run: Run) -> None:
    assert len(faulted_run.rows) == N_SAMPLES
    assert_complete_and_ordered(faulted_run)
    # One report per finished sample (plus reports while none finishes, every 2 s).
    finished = sorted({progress.done for progress in faulted_run.progress} - {0})
    assert finished == list(range(1, N_SAMPLES + 1))
    assert faulted_run.progress[-1].done == N_SAMPLES


@pytest.mark.slow  # three runs of 50 to 100 samples, five metrics, three models
def test_batch_under_faults_really_faulted_about_a_fifth_of_requests(faulted_run: Run) -> None:
    faulted = sum(faulted_run.fault_counts.values())
    assert set(faulted_run.fault_counts) == set(FAULT_KINDS)
    assert 0.12 <= faulted / faulted_run.requests <= 0.35, (faulted, faulted_run.requests)


@pytest.mark.slow  # three runs of 50 to 100 samples, five metrics, three models
def test_batch_under_faults_has_no_nan_anywhere(faulted_run: Run) -> None:
    assert non_finite_floats({"a": [0.5, {"b": math.nan}]}) == [".a[1].b"]  # the probe works
    for row in faulted_run.rows:
        assert non_finite_floats(row.model_dump()) == [], row.index
        for outcome in row.results.values():
            if isinstance(outcome, MetricResult):
                assert 0.0 <= outcome.score <= 1.0


@pytest.mark.slow  # three runs of 50 to 100 samples, five metrics, three models
def test_batch_under_faults_reports_every_failure_explicitly(faulted_run: Run) -> None:
    for i, row in enumerate(faulted_run.rows):
        for key, outcome in row.results.items():
            expected = expected_error(i, key)
            if isinstance(outcome, MetricError):
                assert outcome.key == key and outcome.message
                # Random faults can, rarely, sink every judge of a sample: still explicit.
                assert outcome.error_type == (expected or "AllModelsFailedError"), (i, key)
            else:
                assert expected is None, (i, key)
            if isinstance(outcome, MetricResult):
                for failure in outcome.excluded:
                    assert failure.step in STEPS and failure.error and failure.error_type
                    assert failure.model.split("/")[-1] in (*JUDGES, "embed-a")
    excluded = sum(
        len(outcome.excluded)
        for row in faulted_run.rows
        for outcome in row.results.values()
        if isinstance(outcome, MetricResult)
    )
    assert excluded > 0  # some judges did fail for good and were left out
    for i in JUDGE_B_DOWN_FOR:
        for key in JUDGED:
            outcome = faulted_run.rows[i].results[key]
            if isinstance(outcome, MetricResult):  # else the random faults sank judge-a too
                left_out = {failure.model.split("/")[-1] for failure in outcome.excluded}
                assert "judge-b" in left_out, (i, key)
                assert not any(model.endswith("judge-b") for model in outcome.per_model)


@pytest.mark.slow  # three runs of 50 to 100 samples, five metrics, three models
def test_batch_under_faults_counts_failures_in_a_summary(faulted_run: Run) -> None:
    rows = faulted_run.rows
    for key in KEYS:
        outcomes = [row.results[key] for row in rows]
        summary = summarize(
            key, [item if isinstance(item, MetricResult) else None for item in outcomes]
        )
        errors = sum(isinstance(item, MetricError) for item in outcomes)
        assert (summary.count, summary.error_count, summary.scored) == (
            N_SAMPLES,
            errors,
            N_SAMPLES - errors,
        )
        assert summary.mean is not None and math.isfinite(summary.mean)
        assert errors >= sum(expected_error(i, key) is not None for i in range(N_SAMPLES))
    assert faulted_run.progress[-1].errors == sum(bool(row.errors) for row in rows)


@pytest.mark.slow  # three runs of 50 to 100 samples, five metrics, three models
def test_recovered_faults_do_not_change_scores(
    clean_runs: tuple[Run, Run], faulted_run: Run
) -> None:
    clean, _ = clean_runs
    compared = 0
    for clean_row, row in zip(clean.rows, faulted_run.rows):
        for key, outcome in row.results.items():
            reference = clean_row.results[key]
            if isinstance(outcome, MetricResult) and not outcome.excluded:
                assert isinstance(reference, MetricResult)
                assert outcome.per_model == reference.per_model, (row.index, key)
                assert outcome.score == reference.score
                compared += 1
    assert compared > 0.8 * N_REPEAT * len(KEYS)


def test_metric_batch_puts_each_failed_samples_exception_in_its_place(
    server: LocalOpenAIServer, make_panel: MakePanel
) -> None:
    # Transport faults on first attempts only: every other sample must recover.
    server.faults = poisoned_then(random_faults(0.2, ("429", "500"), seed=5, max_attempt=0))
    subset = SAMPLES[:12]
    for metric in five_metrics(make_panel()):
        outcomes = metric.batch(subset, {"max_concurrency": 16}, return_exceptions=True)
        assert len(outcomes) == len(subset)
        for i, outcome in enumerate(outcomes):
            expected = expected_error(i, metric.key)
            if expected == "InvalidSampleError":
                assert isinstance(outcome, InvalidSampleError), (metric.key, i, outcome)
                assert outcome.metric == metric.key
            elif expected == "AllModelsFailedError":
                assert isinstance(outcome, AllModelsFailedError), (metric.key, i, outcome)
            else:
                assert isinstance(outcome, MetricResult), (metric.key, i, outcome)
                assert outcome.excluded == []
    assert sum(server.fault_counts.values()) > 0
