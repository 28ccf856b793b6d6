"""Summary statistics: mean, pass rate, error count and the bootstrap interval."""

from __future__ import annotations

import math

import numpy as np
import pytest

import langchain_answer_metrics
from langchain_answer_metrics import MetricError, MetricResult, MetricSummary, summarize
from langchain_answer_metrics.run import summary as summary_module
from langchain_answer_metrics.run.summary import bootstrap_ci


def result(score: float, threshold: float | None = None) -> MetricResult:
    return MetricResult(
        key="m",
        score=score,
        threshold=threshold,
        passed=None if threshold is None else score >= threshold,
        band="good",
    )


def test_mean_pass_rate_and_errors() -> None:
    summary = summarize("faithfulness", [1.0, 0.5, None, 0.75, float("nan")], threshold=0.7)
    assert summary.count == 5
    assert summary.scored == 3
    assert summary.error_count == 2  # None and NaN are failed samples
    assert summary.mean == pytest.approx(0.75)
    assert summary.passed == 2
    assert summary.pass_rate == pytest.approx(2 / 3)
    assert summary.ci_low is not None and summary.ci_high is not None
    assert 0.5 <= summary.ci_low <= summary.mean <= summary.ci_high <= 1.0


def test_threshold_boundary_passes() -> None:
    assert summarize("m", [0.7, 0.69], threshold=0.7).pass_rate == 0.5


def test_no_threshold_no_pass_rate() -> None:
    summary = summarize("m", [0.2, 0.4])
    assert summary.threshold is None and summary.pass_rate is None and summary.passed is None


def test_empty_and_all_errors() -> None:
    empty = summarize("m", [], threshold=0.5)
    assert (empty.count, empty.scored, empty.error_count) == (0, 0, 0)
    assert empty.mean is None and empty.pass_rate is None and empty.ci_low is None
    assert empty.describe() == "m: no samples"
    failed = summarize("m", [None, None], threshold=0.5)
    assert failed.error_count == 2 and failed.mean is None and failed.pass_rate is None
    assert failed.describe() == "m: no scores, 2 errors"


def test_one_score_has_no_interval() -> None:
    single = summarize("m", [0.8])
    assert single.mean == 0.8
    assert single.ci_low is None and single.ci_high is None
    assert single.describe() == "m: mean 0.800, 1 scored"
    assert bootstrap_ci([0.8]) is None and bootstrap_ci([]) is None


def test_identical_scores_give_a_point_interval() -> None:
    assert bootstrap_ci([0.6] * 10) == pytest.approx((0.6, 0.6))


def test_interval_is_seeded_and_reasonable() -> None:
    scores = [0.0, 1.0] * 50  # mean 0.5, standard error 0.05
    low, high = bootstrap_ci(scores) or (0.0, 0.0)
    assert bootstrap_ci(scores) == (low, high)  # same seed, same interval
    assert 0.38 < low < 0.45 and 0.55 < high < 0.62
    spread = list(np.linspace(0.0, 1.0, 41))  # continuous: a new seed moves the interval
    assert bootstrap_ci(spread, seed=1) != bootstrap_ci(spread, seed=0)
    narrower = bootstrap_ci(scores, confidence=0.5) or (0.0, 0.0)
    assert low < narrower[0] < 0.5 < narrower[1] < high


def test_interval_does_not_depend_on_chunking(monkeypatch: pytest.MonkeyPatch) -> None:
    scores = list(np.linspace(0.0, 1.0, 301))
    whole = bootstrap_ci(scores, resamples=500)
    monkeypatch.setattr(summary_module, "_DRAWS_PER_CHUNK", 301 * 7)  # 7 resamples per chunk
    assert bootstrap_ci(scores, resamples=500) == whole


def test_bad_parameters() -> None:
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_ci([0.1, 0.2], confidence=1.0)
    with pytest.raises(ValueError, match="resamples"):
        bootstrap_ci([0.1, 0.2], resamples=0)


def test_describe() -> None:
    summary = summarize("faithfulness", [1.0, 0.5, None, 0.75], threshold=0.7)
    assert summary.describe() == (
        f"faithfulness: mean 0.750 (95% CI {summary.ci_low:.3f}–{summary.ci_high:.3f}), "
        "pass rate 67% at >= 0.70, 3 scored, 1 error"
    )


def test_summarize_takes_results_counts_failures_and_reads_the_threshold() -> None:
    error = MetricError(key="m", error_type="InvalidSampleError", message="no response")
    outcomes = [result(0.9, 0.8), result(0.5, 0.8), ValueError("bad row"), None, error]
    summary = summarize("m", outcomes)
    assert summary.threshold == 0.8
    assert (summary.count, summary.scored, summary.error_count) == (5, 2, 3)
    assert summary.pass_rate == 0.5
    assert summarize("m", outcomes, threshold=0.4).pass_rate == 1.0


def test_summarize_takes_scores_and_results_alike() -> None:
    left_out = MetricResult(key="m", score=None, not_applicable="single_turn", band=None)
    mixed = summarize("m", [0.25, result(0.75), np.float32(0.5), left_out, float("nan")])
    assert (mixed.count, mixed.scored, mixed.error_count, mixed.not_applicable) == (5, 3, 1, 1)
    assert mixed.mean == pytest.approx(0.5)
    assert mixed.threshold is None  # results without one, and bare scores: no pass mark
    # Counts given for bare scores add to what the results say.
    assert summarize("m", [0.5, left_out], not_applicable=2).not_applicable == 3


def test_summarize_results_is_a_deprecated_alias_of_summarize() -> None:
    outcomes = [result(0.9, 0.8), result(0.5, 0.8), ValueError("bad row")]
    for old in (
        langchain_answer_metrics.summarize_results,
        summary_module.summarize_results,
    ):
        with pytest.warns(DeprecationWarning, match="use summarize"):
            assert old("m", outcomes, seed=3) == summarize("m", outcomes, seed=3)
    assert "summarize_results" not in langchain_answer_metrics.__all__
    assert "summarize" in langchain_answer_metrics.__all__


def test_summary_is_a_pydantic_model_that_round_trips() -> None:
    summary = summarize("m", [0.1, 0.9, 0.5], threshold=0.5)
    assert MetricSummary.model_validate_json(summary.model_dump_json()) == summary
    assert not any(
        isinstance(value, float) and math.isnan(value) for value in summary.model_dump().values()
    )
