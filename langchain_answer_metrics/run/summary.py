"""Summary statistics of one metric over many samples: mean, pass rate, errors and a 95% CI.

Pure functions over per-sample scores, shared by the LangSmith summary evaluators, the
dataset runner and the CLI. A ``None`` score (or NaN, an exception, a runner ``MetricError``)
is a sample the metric failed on: it counts towards ``error_count`` and nothing else.

A sample the metric does not apply to (``MetricResult.not_applicable``: a response with no
claims under Faithfulness's default) is neither a score nor an error: it is counted in
``not_applicable`` and left out of the mean, the pass rate and the interval. ``no_claims``
counts the samples whose response made no claim (abstentions), left out or scored
(``Faithfulness(no_claims="score_1")``, FactualCorrectness; :func:`has_no_claims` reads any
metric's result), so the abstention rate is always visible::

    >>> summarize("faithfulness", [0.5], not_applicable=1, no_claims=1).describe()
    'faithfulness: mean 0.500, 1 scored, 1 not applicable, 1 with no claims (abstentions)'

    >>> summary = summarize("faithfulness", [1.0, 0.5, None, 0.75], threshold=0.7)
    >>> summary.mean, summary.pass_rate, summary.error_count
    (0.75, 0.6666666666666666, 1)
    >>> summary.describe()
    'faithfulness: mean 0.750 (95% CI 0.500–1.000), pass rate 67% at >= 0.70, 3 scored, 1 error'

The interval is a percentile bootstrap of the mean, seeded, so the same scores always give
the same interval.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from langchain_answer_metrics.core.result import MetricResult

DEFAULT_RESAMPLES = 2000
DEFAULT_SEED = 0
# Resampled values drawn per chunk: bounds memory at ~16 MB whatever the sample count.
_DRAWS_PER_CHUNK = 2_000_000


class MetricSummary(BaseModel):
    """One metric over a set of samples. Statistics are over the scored samples only.

    Attributes:
        key: the metric key.
        count: samples in all: scored, failed on, and not applicable.
        scored: samples with a score.
        error_count: samples the metric failed on (no score).
        not_applicable: samples the metric does not apply to (no score, no error).
        no_claims: samples whose response made no claim (abstentions), scored or not.
        mean: mean score; ``None`` when nothing was scored.
        threshold: the pass mark, if any.
        passed: scored samples with ``score >= threshold`` (``None`` without a threshold).
        pass_rate: ``passed / scored``; ``None`` without a threshold or scores.
        confidence: the level of the interval.
        ci_low: low end of the bootstrap interval of the mean (``None`` under 2 scores).
        ci_high: its high end.

    Example:
        >>> summary = summarize("faithfulness", [0.5, 1.0, None], threshold=0.8)
        >>> summary.mean, summary.pass_rate, summary.error_count
        (0.75, 0.5, 1)
    """

    key: str
    count: int = Field(description="Samples: scored, failed on, and not applicable.")
    scored: int = Field(description="Samples with a score.")
    error_count: int = Field(description="Samples the metric failed on (no score).")
    not_applicable: int = Field(
        default=0, description="Samples the metric does not apply to (no score, no error)."
    )
    no_claims: int = Field(
        default=0,
        description="Samples whose response made no claim (an abstention), "
        "whether not applicable or scored 1.0 (Faithfulness(no_claims='score_1')).",
    )
    mean: float | None = Field(description="Mean score; None when nothing was scored.")
    threshold: float | None = None
    passed: int | None = Field(
        default=None, description="Scored samples with score >= threshold (with a threshold)."
    )
    pass_rate: float | None = Field(
        default=None, description="passed / scored; None without a threshold or scores."
    )
    confidence: float = 0.95
    ci_low: float | None = Field(
        default=None, description="Bootstrap CI of the mean; None with fewer than 2 scores."
    )
    ci_high: float | None = None

    def describe(self) -> str:
        """One line for people: mean, interval, pass rate, counts."""
        if self.count == 0:
            return f"{self.key}: no samples"
        if self.mean is None:
            return f"{self.key}: no scores{self._apart()}, {_errors(self.error_count)}"
        text = f"{self.key}: mean {self.mean:.3f}"
        if self.ci_low is not None and self.ci_high is not None:
            text += f" ({self.confidence:.0%} CI {self.ci_low:.3f}–{self.ci_high:.3f})"
        if self.pass_rate is not None and self.threshold is not None:
            text += f", pass rate {self.pass_rate:.0%} at >= {self.threshold:.2f}"
        text += f", {self.scored} scored{self._apart()}"
        if self.error_count:
            text += f", {_errors(self.error_count)}"
        return text

    def _apart(self) -> str:
        """The samples counted apart from the scores: not applicable, no claims."""
        text = f", {self.not_applicable} not applicable" if self.not_applicable else ""
        if self.no_claims:
            text += f", {self.no_claims} with no claims (abstentions)"
        return text


def has_no_claims(result: MetricResult) -> bool:
    """No judge found a claim in the response (an abstention), read from the result alone,
    whatever the metric (a built-in one or your own):

    - the result is not applicable for want of claims (``not_applicable == "no_claims"``),
      unless its judges' flags name another text than the response (a reference);
    - or it was scored and every judge's details flag the response: a per-model
      ``no_claims`` that is true or names ``"response"`` (``Faithfulness(no_claims=
      "score_1")``, FactualCorrectness, or a details model of your own with that field).

    Example:
        >>> has_no_claims(Faithfulness(llm=judge).invoke({"response": "I don't know.", ...}))
        True
    """
    models = _field(result.details, "models")
    flags = (
        [_field(model, "no_claims") for model in models.values()]
        if isinstance(models, Mapping)
        else []
    )
    if result.not_applicable == "no_claims":
        # Not applicable for want of claims: the response's, unless the judges' flags name
        # another text (ContextRecall's reference had none: no abstention).
        known = [flag for flag in flags if flag is not None]
        return not known or any(_names_the_response(flag) for flag in known)
    return bool(flags) and all(_names_the_response(flag) for flag in flags)


def _field(value: Any, name: str) -> Any:
    """``value[name]`` of a dict, ``value.name`` of a details model, else None."""
    if isinstance(value, Mapping):
        return value.get(name)
    return getattr(value, name, None)


def _names_the_response(flag: Any) -> bool:
    if isinstance(flag, bool):
        return flag
    return isinstance(flag, (list, tuple, set, frozenset)) and "response" in flag


def _errors(count: int) -> str:
    return f"{count} error" + ("" if count == 1 else "s")


def bootstrap_ci(
    scores: Sequence[float],
    *,
    confidence: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean of ``scores``.

    None for fewer than two scores: one value says nothing about spread, and a
    zero-width interval would claim a certainty that is not there.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    values = np.asarray(scores, dtype=np.float64)
    count = len(values)
    if count < 2:
        return None
    rng = np.random.default_rng(seed)
    means = np.empty(resamples, dtype=np.float64)
    chunk = max(1, _DRAWS_PER_CHUNK // count)
    for start in range(0, resamples, chunk):
        stop = min(resamples, start + chunk)
        picks = rng.integers(0, count, size=(stop - start, count))
        means[start:stop] = values[picks].mean(axis=1)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return float(low), float(high)


def _score_of(outcome: object) -> float | None:
    """The outcome's score; None for a failure (None, NaN, an exception, a ``MetricError``)."""
    if isinstance(outcome, MetricResult):
        outcome = outcome.score
    if isinstance(outcome, numbers.Real) and math.isfinite(outcome):
        return float(outcome)
    return None


def summarize(
    key: str,
    outcomes: Iterable[object],
    *,
    threshold: float | None = None,
    confidence: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    not_applicable: int = 0,
    no_claims: int = 0,
) -> MetricSummary:
    """Summarise one metric over samples: each sample's score or ``MetricResult``.

    A ``None``, a NaN, an exception or a runner ``MetricError`` is a sample the metric
    failed on: counted in ``error_count`` and nothing else (so
    ``metric.batch(..., return_exceptions=True)`` can be passed as it is). A result that
    is not applicable is counted apart, and one whose response made no claim (an
    abstention) is counted in ``no_claims``, scored or not. Without ``threshold``, the
    results' own threshold (the metric's) is the pass mark. For bare scores, give the
    samples left out (``not_applicable``) and the abstentions (``no_claims``) as counts.

    Args:
        key: the metric key the summary is for.
        outcomes: one per sample: a score, a ``MetricResult``, or a failure.
        threshold: the pass mark for the pass rate; default: the results' own (none for
            bare scores).
        confidence: the level of the percentile-bootstrap interval of the mean.
        resamples: bootstrap resamples drawn for the interval.
        seed: the bootstrap's random seed (the same scores give the same interval).
        not_applicable: samples the metric did not apply to, not in ``outcomes``.
        no_claims: abstentions among bare scores (results say so themselves).

    Returns:
        The mean over scored samples, its interval, the pass rate and the counts.

    Raises:
        ValueError: a negative ``not_applicable`` or ``no_claims``.

    Example:
        >>> summarize("faithfulness", [0.5, 1.0, None], threshold=0.8).describe()
        'faithfulness: mean 0.750 (95% CI 0.500–1.000), pass rate 50% at >= 0.80, 2 scored, 1 error'
        >>> rows = evaluate_dataset(samples, [faithfulness])
        >>> summarize("faithfulness", [row.results["faithfulness"] for row in rows])
    """
    if not_applicable < 0 or no_claims < 0:
        raise ValueError("not_applicable and no_claims are counts: 0 or more")
    given = list(outcomes)
    results = [item for item in given if isinstance(item, MetricResult)]
    if threshold is None:
        threshold = next((result.threshold for result in results), None)
    applicable = [
        item for item in given if not (isinstance(item, MetricResult) and item.not_applicable)
    ]
    return _summary(
        key,
        [_score_of(item) for item in applicable],
        threshold=threshold,
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        not_applicable=not_applicable + len(given) - len(applicable),
        no_claims=no_claims + sum(has_no_claims(result) for result in results),
    )


def _summary(
    key: str,
    scores: Sequence[float | None],
    *,
    threshold: float | None,
    confidence: float,
    resamples: int,
    seed: int,
    not_applicable: int,
    no_claims: int,
) -> MetricSummary:
    """The statistics of per-sample ``scores`` (None: a failure)."""
    scored = [score for score in scores if score is not None]
    mean = float(np.mean(scored)) if scored else None
    passed = pass_rate = None
    if threshold is not None and scored:
        passed = sum(score >= threshold for score in scored)
        pass_rate = passed / len(scored)
    interval = bootstrap_ci(scored, confidence=confidence, resamples=resamples, seed=seed)
    return MetricSummary(
        key=key,
        count=len(scores) + not_applicable,
        scored=len(scored),
        error_count=len(scores) - len(scored),
        not_applicable=not_applicable,
        no_claims=no_claims,
        mean=mean,
        threshold=threshold,
        passed=passed,
        pass_rate=pass_rate,
        confidence=confidence,
        ci_low=interval[0] if interval else None,
        ci_high=interval[1] if interval else None,
    )


def summarize_results(
    key: str,
    results: Iterable[MetricResult | BaseException | None],
    *,
    threshold: float | None = None,
    confidence: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> MetricSummary:
    """Deprecated, removed in 0.3.0: :func:`summarize` takes results as they are.

    Warns (``DeprecationWarning``) and returns ``summarize(key, results, ...)``: the
    same summary, a name less to learn.

    Example:
        >>> summarize_results("faithfulness", results)  # now: summarize("faithfulness", results)
    """
    warnings.warn(
        "summarize_results is deprecated and goes in 0.3.0: use summarize, which takes "
        "results as they are (the same arguments)",
        DeprecationWarning,
        stacklevel=2,
    )
    return summarize(
        key, results, threshold=threshold, confidence=confidence, resamples=resamples, seed=seed
    )
