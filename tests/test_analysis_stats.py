"""The statistics of calibrate and compare, against hand-worked cases and against scipy /
scikit-learn (test-only dependencies) on fixed data."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest

from langchain_answer_metrics.analysis import stats
from langchain_answer_metrics.analysis.comparison import sign_flip_p_value

# The references are imported by the tests that use them, not while collecting: every
# test process collects this file, and scipy.stats with scikit-learn cost it a second.


@pytest.fixture(scope="module")
def scipy_stats() -> Any:
    return pytest.importorskip("scipy.stats")


@pytest.fixture(scope="module")
def metrics() -> Any:
    return pytest.importorskip("sklearn.metrics")


@pytest.fixture(scope="module")
def krippendorff() -> Any:
    return pytest.importorskip("krippendorff")


RNG = np.random.default_rng(42)
SCORES = np.round(RNG.random(60), 2)  # rounded: ties, as judges' scores have
LABELS = (RNG.random(60) < np.clip(SCORES + 0.2 * RNG.standard_normal(60), 0, 1)).astype(float)
CONTINUOUS = np.clip(SCORES + 0.25 * RNG.standard_normal(60), 0, 1)


# --------------------------------------------------------------------------- by hand


def test_confusion_matrix_and_rates_by_hand() -> None:
    scores = np.array([0.9, 0.8, 0.6, 0.4, 0.3, 0.1])
    labels = np.array([1, 1, 0, 1, 0, 0], dtype=float)
    # at 0.5: predicted positive 0.9, 0.8, 0.6 -> tp 2, fp 1; negatives 0.4 (fn), 0.3, 0.1
    table = stats.confusion(scores, labels, 0.5)
    assert table == (2, 1, 1, 2)
    assert stats.accuracy(*table) == pytest.approx(4 / 6)
    assert stats.precision(*table) == pytest.approx(2 / 3)
    assert stats.recall(*table) == pytest.approx(2 / 3)
    assert stats.f1(*table) == pytest.approx(2 / 3)
    # p_o = 4/6; p_e = (3/6)(3/6) + (3/6)(3/6) = 1/2; kappa = (2/3 - 1/2) / (1/2) = 1/3
    assert stats.cohen_kappa(*table) == pytest.approx(1 / 3)
    # positives {0.9, 0.8, 0.4} vs negatives {0.6, 0.3, 0.1}: 8 of 9 pairs ordered right
    assert stats.roc_auc(scores, labels) == pytest.approx(8 / 9)


def test_roc_auc_counts_ties_as_half() -> None:
    assert stats.roc_auc(np.array([0.5, 0.5]), np.array([1.0, 0.0])) == 0.5
    assert math.isnan(stats.roc_auc(np.array([0.5, 0.7]), np.array([1.0, 1.0])))


def test_best_thresholds_by_hand() -> None:
    scores = np.array([0.9, 0.8, 0.6, 0.4, 0.3, 0.1])
    labels = np.array([1, 1, 0, 1, 0, 0], dtype=float)
    # thresholds 0.4: tp 3, fp 1 -> F1 6/7 (the best); J = 1 + 2/3 - 1 = 2/3 (the best)
    assert stats.best_threshold_f1(scores, labels) == 0.4
    assert stats.best_threshold_youden(scores, labels) == 0.4


def test_undefined_statistics_are_nan() -> None:
    assert math.isnan(stats.precision(0, 0, 3, 3))
    assert math.isnan(stats.pearson(np.array([0.5, 0.5, 0.5]), np.array([0.1, 0.2, 0.3])))
    assert math.isnan(stats.cohen_kappa(4, 0, 0, 0))


def test_kendall_and_spearman_by_hand() -> None:
    x = np.array([1.0, 2.0, 3.0, 4.0])
    y = np.array([1.0, 3.0, 2.0, 4.0])
    # 6 pairs, one discordant (2,3): tau = (5 - 1) / 6
    assert stats.kendall(x, y) == pytest.approx(4 / 6)
    # d = (0, -1, 1, 0): rho = 1 - 6 * 2 / (4 * 15) = 0.8
    assert stats.spearman(x, y) == pytest.approx(0.8)
    assert stats.mae(x, y) == pytest.approx(0.5)


def test_kappa_of_nominal_verdicts_by_hand() -> None:
    a = ["PASS", "PASS", "FAIL", "FAIL"]
    b = ["PASS", "FAIL", "FAIL", "FAIL"]
    # p_o = 3/4; p_e = (2/4)(1/4) + (2/4)(3/4) = 1/2; kappa = 1/2
    assert stats.kappa_of(a, b) == pytest.approx(0.5)


def test_krippendorff_alpha_by_hand() -> None:
    # Two raters, nominal, units (a,a) (a,b) (b,b): coincidences o_aa = 2, o_ab = o_ba = 1,
    # o_bb = 2; n = 6, n_a = n_b = 3. D_o = 2/6, D_e = 2*3*3/(6*5) = 3/5;
    # alpha = 1 - (1/3)/(3/5) = 4/9.
    ratings = [[0.0, 0.0, 1.0], [0.0, 1.0, 1.0]]
    assert stats.krippendorff_alpha(ratings, "nominal") == pytest.approx(4 / 9)
    assert math.isnan(stats.krippendorff_alpha([[1.0, 1.0], [1.0, 1.0]], "interval"))
    assert math.isnan(stats.krippendorff_alpha([[0.2, 0.4]], "interval"))


def test_sign_flip_p_value_by_hand() -> None:
    # Three positive differences: of 8 sign patterns only all-plus and all-minus give a
    # mean as far from 0 -> p = 2/8.
    assert sign_flip_p_value([0.1, 0.2, 0.3]) == pytest.approx(0.25)
    assert sign_flip_p_value([0.0, 0.0]) == 1.0
    # zeros do not count as flips
    assert sign_flip_p_value([0.1, 0.2, 0.3, 0.0]) == pytest.approx(0.25)


def test_sign_flip_p_value_monte_carlo_is_close_to_exact() -> None:
    diffs = list(np.round(RNG.normal(0.05, 0.2, 16), 3))
    exact = sign_flip_p_value(diffs)
    signs = np.array(list(itertools.product((1, -1), repeat=16)))
    by_brute_force = np.mean(np.abs(signs @ np.array(diffs)) >= abs(sum(diffs)) - 1e-9)
    assert exact == pytest.approx(by_brute_force)
    sampled = sign_flip_p_value([*diffs, 0.001], permutations=20_000)
    assert sampled == pytest.approx(exact, abs=0.03)


# --------------------------------------------------------------------------- cross-checks


@pytest.mark.parametrize("threshold", [0.3, 0.5, 0.7])
def test_binary_statistics_match_scikit_learn(threshold: float, metrics: Any) -> None:
    predicted = (threshold <= SCORES).astype(int)
    table = stats.confusion(SCORES, LABELS, threshold)
    tn, fp, fn, tp = metrics.confusion_matrix(LABELS, predicted, labels=[0, 1]).ravel()
    assert table == (tp, fp, fn, tn)
    assert stats.accuracy(*table) == pytest.approx(metrics.accuracy_score(LABELS, predicted))
    assert stats.precision(*table) == pytest.approx(metrics.precision_score(LABELS, predicted))
    assert stats.recall(*table) == pytest.approx(metrics.recall_score(LABELS, predicted))
    assert stats.f1(*table) == pytest.approx(metrics.f1_score(LABELS, predicted))
    assert stats.cohen_kappa(*table) == pytest.approx(metrics.cohen_kappa_score(LABELS, predicted))


def test_roc_auc_and_curve_match_scikit_learn(metrics: Any) -> None:
    assert stats.roc_auc(SCORES, LABELS) == pytest.approx(metrics.roc_auc_score(LABELS, SCORES))
    fpr, tpr, _ = metrics.roc_curve(LABELS, SCORES, drop_intermediate=False)
    ours = stats.roc_curve(SCORES, LABELS)
    assert [p[1] for p in ours] == pytest.approx(list(fpr))
    assert [p[2] for p in ours] == pytest.approx(list(tpr))


def test_best_thresholds_match_a_scikit_learn_search(metrics: Any) -> None:
    candidates = sorted(set(SCORES))
    f1s = [metrics.f1_score(LABELS, t <= SCORES) for t in candidates]
    assert stats.best_threshold_f1(SCORES, LABELS) == candidates[int(np.argmax(f1s))]
    fpr, tpr, thresholds = metrics.roc_curve(LABELS, SCORES, drop_intermediate=False)
    youden = tpr - fpr
    best = thresholds[np.flatnonzero(youden == youden.max())].min()
    assert stats.best_threshold_youden(SCORES, LABELS) == pytest.approx(best)


def test_correlations_match_scipy(metrics: Any, scipy_stats: Any) -> None:
    assert stats.pearson(SCORES, CONTINUOUS) == pytest.approx(
        scipy_stats.pearsonr(SCORES, CONTINUOUS).statistic
    )
    assert stats.spearman(SCORES, CONTINUOUS) == pytest.approx(
        scipy_stats.spearmanr(SCORES, CONTINUOUS).statistic
    )
    assert stats.kendall(SCORES, CONTINUOUS) == pytest.approx(
        scipy_stats.kendalltau(SCORES, CONTINUOUS).statistic  # tau-b
    )
    assert stats.kendall(SCORES, LABELS) == pytest.approx(
        scipy_stats.kendalltau(SCORES, LABELS).statistic  # heavy ties in one variable
    )
    assert stats.mae(SCORES, CONTINUOUS) == pytest.approx(
        metrics.mean_absolute_error(CONTINUOUS, SCORES)
    )


def test_pairwise_kappa_matches_scikit_learn(metrics: Any) -> None:
    a = list(RNG.choice(["PASS", "FAIL"], 40))
    b = [v if RNG.random() < 0.8 else ("PASS" if v == "FAIL" else "FAIL") for v in a]
    assert stats.kappa_of(a, b) == pytest.approx(metrics.cohen_kappa_score(a, b))


def test_interval_alpha_with_missing_values() -> None:
    ratings = [[0.1, 0.4, None, 0.9, 0.5], [0.2, 0.5, 0.7, 0.8, None], [0.1, None, 0.6, 1.0, 0.4]]
    value = stats.krippendorff_alpha(ratings, "interval")
    # Interval alpha by its definition: 1 - D_o / D_e over pairable values.
    units = [[r[u] for r in ratings if r[u] is not None] for u in range(5)]
    units = [u for u in units if len(u) >= 2]
    n = sum(len(u) for u in units)
    d_o = (
        sum(
            sum((a - b) ** 2 for i, a in enumerate(u) for j, b in enumerate(u) if i != j)
            / (len(u) - 1)
            for u in units
        )
        / n
    )
    values = [v for u in units for v in u]
    d_e = sum((a - b) ** 2 for i, a in enumerate(values) for j, b in enumerate(values) if i != j)
    d_e /= n * (n - 1)
    assert value == pytest.approx(1 - d_o / d_e)


def test_bootstrap_interval_brackets_the_value_and_is_seeded() -> None:
    functions = stats.binary_statistic_functions(0.5)
    first = stats.bootstrap(functions, SCORES, LABELS)
    assert first == stats.bootstrap(functions, SCORES, LABELS)
    for name, (value, low, high) in first.items():
        assert low is not None and high is not None, name
        assert low <= high
        if name not in {"best_threshold_f1", "best_threshold_youden"}:
            assert low - 1e-9 <= value <= high + 1e-9, name
    value, low, high = stats.bootstrap({"mae": stats.mae}, [0.5], [0.5])["mae"]
    assert (value, low, high) == (0.0, None, None)


def test_kendall_bootstrap_by_weights_matches_resampling_directly(scipy_stats: Any) -> None:
    x, y = SCORES[:40], np.round(CONTINUOUS[:40], 1)
    _, low, high = stats.bootstrap({"kendall": stats.kendall}, x, y, resamples=300, seed=7)[
        "kendall"
    ]
    # the same draws, each resample's tau-b computed on the resampled values
    picks = np.random.default_rng(7).integers(0, 40, size=(300, 40))
    taus = [stats.kendall(x[row], y[row]) for row in picks]
    expected = np.quantile([t for t in taus if np.isfinite(t)], [0.025, 0.975])
    assert (low, high) == pytest.approx(tuple(expected))
    assert taus[:3] == pytest.approx(
        [scipy_stats.kendalltau(x[row], y[row]).statistic for row in picks[:3]]
    )


def test_krippendorff_alpha_interval_resamples_units(krippendorff: Any) -> None:
    a = list(np.round(SCORES[:30], 1))
    b = list(np.round(np.clip(SCORES[:30] + 0.1 * RNG.standard_normal(30), 0, 1), 1))
    interval = stats.krippendorff_alpha_ci([a, b], "interval", resamples=200, seed=3)
    assert interval is not None
    value = stats.krippendorff_alpha([a, b], "interval")
    assert interval[0] <= value <= interval[1]
    rng = np.random.default_rng(3)
    draws = []
    for _ in range(200):
        picks = rng.integers(0, 30, size=30)
        draws.append(
            krippendorff.alpha(
                reliability_data=[[a[i] for i in picks], [b[i] for i in picks]],
                level_of_measurement="interval",
            )
        )
    assert interval == pytest.approx(tuple(np.quantile(draws, [0.025, 0.975])))
    assert stats.krippendorff_alpha_ci([[0.5, 0.5], [0.5, 0.5]], "interval") is None
