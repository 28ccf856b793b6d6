"""The statistics of agreement between scores and human labels, with bootstrap intervals.

Pure functions over numpy arrays; no model, no file. A statistic that is undefined on the
data (precision with nothing predicted positive, a correlation of a constant) is NaN, and
a bootstrap interval is taken over the resamples where it is defined.

    >>> binary_statistics([0.9, 0.2, 0.7, 0.4], [True, False, False, True], threshold=0.5)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]
Statistic = Callable[[Array, Array], float]

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 0


def _nan_div(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else float("nan")


def confusion(scores: Array, labels: Array, threshold: float) -> tuple[int, int, int, int]:
    """``(tp, fp, fn, tn)`` of ``score >= threshold`` against boolean labels."""
    predicted = scores >= threshold
    actual = labels.astype(bool)
    return (
        int(np.sum(predicted & actual)),
        int(np.sum(predicted & ~actual)),
        int(np.sum(~predicted & actual)),
        int(np.sum(~predicted & ~actual)),
    )


def accuracy(tp: int, fp: int, fn: int, tn: int) -> float:
    return _nan_div(tp + tn, tp + fp + fn + tn)


def precision(tp: int, fp: int, fn: int, tn: int) -> float:
    return _nan_div(tp, tp + fp)


def recall(tp: int, fp: int, fn: int, tn: int) -> float:
    return _nan_div(tp, tp + fn)


def f1(tp: int, fp: int, fn: int, tn: int) -> float:
    return _nan_div(2 * tp, 2 * tp + fp + fn)


def cohen_kappa(tp: int, fp: int, fn: int, tn: int) -> float:
    """Cohen's kappa of two binary raters from their 2x2 table."""
    n = tp + fp + fn + tn
    if n == 0:
        return float("nan")
    observed = (tp + tn) / n
    expected = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / (n * n)
    if expected == 1.0:
        return float("nan")  # both raters constant and equal: kappa is undefined
    return (observed - expected) / (1.0 - expected)


def kappa_of(first: Sequence[object], second: Sequence[object]) -> float:
    """Cohen's kappa of two raters' nominal verdicts (any hashable categories)."""
    a, b = list(first), list(second)
    n = len(a)
    if n == 0 or n != len(b):
        return float("nan")
    categories = sorted(set(a) | set(b), key=repr)
    observed = sum(x == y for x, y in zip(a, b)) / n
    expected = sum((a.count(c) / n) * (b.count(c) / n) for c in categories)
    if expected == 1.0:
        return float("nan")
    return (observed - expected) / (1.0 - expected)


def roc_auc(scores: Array, labels: Array) -> float:
    """Area under the ROC curve: P(score of a positive > score of a negative), ties 1/2."""
    actual = labels.astype(bool)
    positives, negatives = scores[actual], scores[~actual]
    if len(positives) == 0 or len(negatives) == 0:
        return float("nan")
    greater = np.sum(positives[:, None] > negatives[None, :])
    ties = np.sum(positives[:, None] == negatives[None, :])
    return float((greater + 0.5 * ties) / (len(positives) * len(negatives)))


def roc_curve(scores: Array, labels: Array) -> list[tuple[float, float, float]]:
    """``(threshold, fpr, tpr)`` at every distinct score (and above the highest)."""
    actual = labels.astype(bool)
    positives, negatives = int(actual.sum()), int((~actual).sum())
    points = []
    for threshold in [float("inf"), *sorted(set(scores.tolist()), reverse=True)]:
        tp, fp, _, _ = confusion(scores, labels, threshold)
        points.append((threshold, _nan_div(fp, negatives), _nan_div(tp, positives)))
    return points


def _best_threshold(scores: Array, labels: Array, objective: Callable[..., float]) -> float:
    """The lowest distinct score that, as a threshold, maximises ``objective``."""
    best, best_value = float("nan"), -np.inf
    for threshold in sorted(set(scores.tolist())):
        value = objective(*confusion(scores, labels, threshold))
        if np.isfinite(value) and value > best_value:
            best, best_value = threshold, value
    return best


def youden_j(tp: int, fp: int, fn: int, tn: int) -> float:
    """Sensitivity + specificity - 1."""
    return _nan_div(tp, tp + fn) + _nan_div(tn, tn + fp) - 1.0


def best_threshold_f1(scores: Array, labels: Array) -> float:
    return _best_threshold(scores, labels, f1)


def best_threshold_youden(scores: Array, labels: Array) -> float:
    return _best_threshold(scores, labels, youden_j)


def _ranks(values: Array) -> Array:
    """Average ranks (ties share the mean of their positions), 1-based."""
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(len(values), dtype=np.float64)
    ranks[order] = np.arange(1, len(values) + 1, dtype=np.float64)
    for value in np.unique(values):
        tied = values == value
        ranks[tied] = ranks[tied].mean()
    return ranks


def pearson(x: Array, y: Array) -> float:
    if len(x) < 2:
        return float("nan")
    dx, dy = x - x.mean(), y - y.mean()
    denominator = float(np.sqrt(np.sum(dx * dx) * np.sum(dy * dy)))
    return _nan_div(float(np.sum(dx * dy)), denominator)


def spearman(x: Array, y: Array) -> float:
    return pearson(_ranks(x), _ranks(y))


def kendall(x: Array, y: Array) -> float:
    """Kendall's tau-b (ties in either variable accounted for)."""
    n = len(x)
    if n < 2:
        return float("nan")
    upper = np.triu_indices(n, k=1)
    sx = np.sign(x[:, None] - x[None, :])[upper]
    sy = np.sign(y[:, None] - y[None, :])[upper]
    concordance = float(np.sum(sx * sy))
    denominator = float(np.sqrt(np.sum(sx != 0) * np.sum(sy != 0)))
    return _nan_div(concordance, denominator)


def mae(x: Array, y: Array) -> float:
    return float(np.mean(np.abs(x - y))) if len(x) else float("nan")


def _from_table(function: Callable[[int, int, int, int], float], threshold: float) -> Statistic:
    return lambda scores, labels: function(*confusion(scores, labels, threshold))


def binary_statistic_functions(threshold: float) -> dict[str, Statistic]:
    """The statistics of a score against pass/fail labels, by their names in the report."""
    return {
        "accuracy": _from_table(accuracy, threshold),
        "precision": _from_table(precision, threshold),
        "recall": _from_table(recall, threshold),
        "f1": _from_table(f1, threshold),
        "cohen_kappa": _from_table(cohen_kappa, threshold),
        "roc_auc": roc_auc,
        "best_threshold_f1": best_threshold_f1,
        "best_threshold_youden": best_threshold_youden,
    }


CONTINUOUS_STATISTICS: dict[str, Statistic] = {
    "pearson": pearson,
    "spearman": spearman,
    "kendall": kendall,
    "mae": mae,
}


def bootstrap(
    statistics: dict[str, Statistic],
    scores: Sequence[float],
    labels: Sequence[float],
    *,
    confidence: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict[str, tuple[float, float | None, float | None]]:
    """Each statistic's ``(value, ci_low, ci_high)``: a percentile bootstrap over samples,
    seeded (the same data always give the same interval). The interval is None with fewer
    than two samples, or when the statistic is undefined on most resamples."""
    x = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    n = len(x)
    values = {name: function(x, y) for name, function in statistics.items()}
    draws: dict[str, list[float]] = {name: [] for name in statistics}
    if n >= 2:
        rng = np.random.default_rng(seed)
        for _ in range(resamples):
            picks = rng.integers(0, n, size=n)
            xs, ys = x[picks], y[picks]
            for name, function in statistics.items():
                draws[name].append(function(xs, ys))
    tail = (1.0 - confidence) / 2.0
    result: dict[str, tuple[float, float | None, float | None]] = {}
    for name, value in values.items():
        finite = np.asarray([v for v in draws[name] if np.isfinite(v)], dtype=np.float64)
        if len(finite) * 2 <= resamples or n < 2:
            result[name] = (value, None, None)
        else:
            low, high = np.quantile(finite, [tail, 1.0 - tail])
            result[name] = (value, float(low), float(high))
    return result


def krippendorff_alpha(
    ratings: Sequence[Sequence[float | None]], level: Literal["interval", "nominal"]
) -> float:
    """Krippendorff's alpha of raters x units (None: not rated), ``interval`` or ``nominal``.

    Computed by the ``krippendorff`` package; NaN when it is undefined (fewer than two
    raters, no unit rated twice, or a single value throughout).
    """
    import krippendorff

    data = np.asarray(
        [[np.nan if value is None else value for value in row] for row in ratings],
        dtype=np.float64,
    )
    if data.ndim != 2 or data.shape[0] < 2:
        return float("nan")
    pairable = np.sum(np.sum(~np.isnan(data), axis=0) >= 2)
    values = np.unique(data[~np.isnan(data)])
    if pairable == 0 or len(values) < 2:
        return float("nan")
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))
