"""The measured gain of an alignment: agreement with the labels before and after, on rows
the alignment never saw, each statistic with its paired difference and a bootstrap CI.

The same resample of held-out rows is drawn for before and after, so the interval is of
the paired difference (after - before). Pass/fail statistics are taken on each row's
decision (its score against the threshold in effect for it: the metric's before, the
fitted one after), ROC AUC and the continuous ones on the scores.

    >>> gain = measured_gain(before, after, labels, kind="binary")
    >>> gain.finding, gain.primary
    ('improved', 'cohen_kappa')
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

import langchain_answer_metrics.analysis.stats as stats

Finding = Literal["improved", "no measurable change", "worse"]
RESAMPLES = 1000


def _alpha(x: stats.Array, y: stats.Array) -> float:
    """Krippendorff's alpha (interval) of the scores and the labels, as two raters."""
    return stats.krippendorff_alpha([list(x), list(y)], "interval")


def _on_decisions(function: Callable[..., float]) -> stats.Statistic:
    return lambda decisions, labels: function(*stats.confusion(decisions, labels, 0.5))


BINARY: dict[str, stats.Statistic] = {
    "accuracy": _on_decisions(stats.accuracy),
    "cohen_kappa": _on_decisions(stats.cohen_kappa),
    "f1": _on_decisions(stats.f1),
    "roc_auc": stats.roc_auc,
}
CONTINUOUS: dict[str, stats.Statistic] = {
    "spearman": stats.spearman,
    "mae": stats.mae,
    "krippendorff_alpha": _alpha,
}
LOWER_IS_BETTER = frozenset({"mae"})
PRIMARY = {"binary": "cohen_kappa", "continuous": "spearman"}


class StatisticGain(BaseModel):
    """One statistic before and after, their paired difference and its 95% CI.

    Example:
        >>> gain.statistics["accuracy"].difference, gain.statistics["accuracy"].finding
        (0.333, 'improved')
    """

    before: float | None
    after: float | None
    difference: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    finding: Finding = "no measurable change"
    lower_is_better: bool = False


class Gain(BaseModel):
    """Per statistic, before/after/difference with a CI; the primary statistic's finding.

    Example:
        >>> gain.summary()
        'improved: cohen_kappa 0.400 -> 1.000, difference 0.600 [95% CI 0.400, 0.782] ...'
    """

    n: int = Field(description="Held-out rows measured.")
    label_type: Literal["binary", "continuous"]
    primary: str
    finding: Finding
    statistics: dict[str, StatisticGain] = Field(default_factory=dict)

    def summary(self) -> str:
        """One line: the finding, on the primary statistic, with its numbers."""
        main = self.statistics[self.primary]
        numbers = (
            f"{_show(main.before)} -> {_show(main.after)}, difference {_show(main.difference)} "
            f"[95% CI {_show(main.ci_low)}, {_show(main.ci_high)}]"
        )
        return f"{self.finding}: {self.primary} {numbers} on {self.n} held-out rows"


def _show(value: float | None) -> str:
    return "-" if value is None else f"{value:+.3f}" if value < 0 else f"{value:.3f}"


def _clean(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def _finding(low: float | None, high: float | None, lower_is_better: bool) -> Finding:
    if low is None or high is None or low <= 0.0 <= high:
        return "no measurable change"
    better = high < 0.0 if lower_is_better else low > 0.0
    return "improved" if better else "worse"


def measured_gain(
    before: Sequence[float],
    after: Sequence[float],
    labels: Sequence[float | bool],
    *,
    kind: Literal["binary", "continuous"],
    before_threshold: float | Sequence[float] = 0.5,
    after_threshold: float | Sequence[float] = 0.5,
    seed: int = 0,
    resamples: int = RESAMPLES,
) -> Gain:
    """Before and after on the same held-out rows (same order), with paired CIs.

    Args:
        before: each row's score by the metric as it was.
        after: each row's score by the aligned metric fitted without that row.
        labels: the rows' human labels.
        kind: ``"binary"`` (pass/fail labels) or ``"continuous"``.
        before_threshold: the pass mark before (one, or one per row).
        after_threshold: the pass mark after (one per row under k-fold: each fold's).
        seed: the bootstrap's seed (the same data give the same intervals).
        resamples: bootstrap resamples.

    Example:
        >>> measured_gain([0, 1, 0, 1], [1, 1, 0, 1], [True, True, False, True],
        ...               kind="binary").statistics["accuracy"].difference
        0.25
    """
    x0, x1 = np.asarray(before, dtype=float), np.asarray(after, dtype=float)
    y = np.asarray([float(label) for label in labels], dtype=float)
    n = len(y)
    functions = BINARY if kind == "binary" else CONTINUOUS

    def inputs(scores: stats.Array, threshold: float | Sequence[float], name: str) -> stats.Array:
        if kind == "binary" and name != "roc_auc":
            return (scores >= np.asarray(threshold, dtype=float)).astype(float)
        return scores

    rng = np.random.default_rng(seed)
    picks = rng.integers(0, n, size=(resamples, n)) if n >= 2 else np.empty((0, n), dtype=int)
    result: dict[str, StatisticGain] = {}
    for name, function in functions.items():
        a0, a1 = inputs(x0, before_threshold, name), inputs(x1, after_threshold, name)
        value0, value1 = function(a0, y), function(a1, y)
        with np.errstate(invalid="ignore", divide="ignore"):
            draws = np.asarray(
                [function(a1[row], y[row]) - function(a0[row], y[row]) for row in picks]
            )
        finite = draws[np.isfinite(draws)]
        low = high = None
        if len(finite) * 2 > resamples:
            low, high = (float(q) for q in np.quantile(finite, [0.025, 0.975]))
        lower = name in LOWER_IS_BETTER
        result[name] = StatisticGain(
            before=_clean(value0),
            after=_clean(value1),
            difference=_clean(value1 - value0),
            ci_low=low,
            ci_high=high,
            finding=_finding(low, high, lower),
            lower_is_better=lower,
        )
    primary = PRIMARY[kind]
    return Gain(
        n=n,
        label_type=kind,
        primary=primary,
        finding=result[primary].finding,
        statistics=result,
    )
