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
    """Area under the ROC curve: P(score of a positive > score of a negative), ties 1/2
    (the Mann-Whitney U statistic over average ranks)."""
    actual = labels.astype(bool)
    positives, negatives = int(actual.sum()), int((~actual).sum())
    if positives == 0 or negatives == 0:
        return float("nan")
    rank_sum = float(_ranks(scores)[actual].sum())
    return (rank_sum - positives * (positives + 1) / 2) / (positives * negatives)


def roc_curve(scores: Array, labels: Array) -> list[tuple[float, float, float]]:
    """``(threshold, fpr, tpr)`` at every distinct score (and above the highest)."""
    actual = labels.astype(bool)
    positives, negatives = int(actual.sum()), int((~actual).sum())
    points = []
    for threshold in [float("inf"), *sorted(set(scores.tolist()), reverse=True)]:
        tp, fp, _, _ = confusion(scores, labels, threshold)
        points.append((threshold, _nan_div(fp, negatives), _nan_div(tp, positives)))
    return points


def _sweep(scores: Array, labels: Array) -> tuple[Array, ...]:
    """Every distinct score as a threshold (ascending), with ``tp, fp, fn, tn`` at each."""
    actual = labels.astype(bool)
    thresholds = np.unique(scores)
    positives, negatives = np.sort(scores[actual]), np.sort(scores[~actual])
    tp = (len(positives) - np.searchsorted(positives, thresholds, side="left")).astype(float)
    fp = (len(negatives) - np.searchsorted(negatives, thresholds, side="left")).astype(float)
    return thresholds, tp, fp, len(positives) - tp, len(negatives) - fp


def _first_best(thresholds: Array, values: Array) -> float:
    """The lowest threshold with the highest finite value (NaN when there is none)."""
    finite = np.isfinite(values)
    if not finite.any():
        return float("nan")
    best = np.max(values[finite])
    return float(thresholds[np.flatnonzero(finite & (values == best))[0]])


def youden_j(tp: int, fp: int, fn: int, tn: int) -> float:
    """Sensitivity + specificity - 1."""
    return _nan_div(tp, tp + fn) + _nan_div(tn, tn + fp) - 1.0


def best_threshold_f1(scores: Array, labels: Array) -> float:
    """The lowest distinct score that, as a threshold, maximises F1."""
    thresholds, tp, fp, fn, _ = _sweep(scores, labels)
    with np.errstate(divide="ignore", invalid="ignore"):
        return _first_best(thresholds, 2 * tp / (2 * tp + fp + fn))


def best_threshold_youden(scores: Array, labels: Array) -> float:
    """The lowest distinct score that, as a threshold, maximises Youden's J."""
    thresholds, tp, fp, fn, tn = _sweep(scores, labels)
    with np.errstate(divide="ignore", invalid="ignore"):
        return _first_best(thresholds, tp / (tp + fn) + tn / (tn + fp) - 1.0)


def _ranks(values: Array) -> Array:
    """Average ranks (ties share the mean of their positions), 1-based."""
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    return ((ends - counts + 1 + ends) / 2.0)[inverse]


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
    if len(x) < 2:
        return float("nan")
    # Over all ordered pairs (each unordered pair twice, which cancels in the ratio).
    sx = np.sign(np.subtract.outer(x, x)).astype(np.int8)
    sy = np.sign(np.subtract.outer(y, y)).astype(np.int8)
    concordance = float(np.sum(sx * sy, dtype=np.int64))
    denominator = float(np.sqrt(float(np.count_nonzero(sx)) * float(np.count_nonzero(sy))))
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
        # Kendall's tau is quadratic per resample; resampled as weights over the pairs
        # of the original samples instead, all resamples of a chunk in one product.
        by_weights = statistics.get("kendall") is kendall and n <= _KENDALL_WEIGHTED_UP_TO
        pairwise = _kendall_pairs(x, y) if by_weights else None
        rows = max(1, _DRAWS_PER_CHUNK // n)
        for start in range(0, resamples, rows):
            picks = rng.integers(0, n, size=(min(rows, resamples - start), n))
            for row in picks:
                xs, ys = x[row], y[row]
                for name, function in statistics.items():
                    if not (by_weights and name == "kendall"):
                        draws[name].append(function(xs, ys))
            if pairwise is not None:
                draws["kendall"].extend(_kendall_weighted(pairwise, picks, n))
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


_DRAWS_PER_CHUNK = 1_000_000
_KENDALL_WEIGHTED_UP_TO = 3000


def _kendall_pairs(x: Array, y: Array) -> tuple[NDArray[np.float32], ...]:
    """Per ordered pair: sign(dx)·sign(dy), |sign(dx)|, |sign(dy)|."""
    sx = np.sign(np.subtract.outer(x, x)).astype(np.float32)
    sy = np.sign(np.subtract.outer(y, y)).astype(np.float32)
    return sx * sy, np.abs(sx), np.abs(sy)


def _kendall_weighted(
    pairwise: tuple[NDArray[np.float32], ...], picks: NDArray[np.int64], n: int
) -> list[float]:
    """Kendall's tau-b of each resample (a row of ``picks``), as ``w' A w`` over the
    multiplicities ``w`` of the original samples in it: a drawn pair (i, j) counts
    w_i·w_j times, and a sample drawn twice pairs with itself as a tie."""
    rows = len(picks)
    offsets = (np.arange(rows)[:, None] * n + picks).ravel()
    weights = np.bincount(offsets, minlength=rows * n).reshape(rows, n).astype(np.float32)
    concordance, tied_x, tied_y = (
        np.einsum("rj,rj->r", weights @ matrix, weights, dtype=np.float64) for matrix in pairwise
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        taus = concordance / np.sqrt(tied_x * tied_y)
    return [float(tau) for tau in taus]


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


ALPHA_RESAMPLES = 500


def krippendorff_alpha_ci(
    ratings: Sequence[Sequence[float | None]],
    level: Literal["interval", "nominal"],
    *,
    confidence: float = 0.95,
    resamples: int = ALPHA_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> tuple[float, float] | None:
    """A percentile bootstrap interval of :func:`krippendorff_alpha`, resampling the units
    (the samples rated), seeded; None when alpha is undefined on most resamples."""
    columns = list(zip(*ratings))
    if len(columns) < 2 or len(ratings) < 2:
        return None
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(resamples):
        picks = rng.integers(0, len(columns), size=len(columns))
        resampled = [[columns[unit][rater] for unit in picks] for rater in range(len(ratings))]
        draws.append(krippendorff_alpha(resampled, level))
    finite = np.asarray([value for value in draws if np.isfinite(value)], dtype=np.float64)
    if len(finite) * 2 <= resamples:
        return None
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(finite, [tail, 1.0 - tail])
    return float(low), float(high)
