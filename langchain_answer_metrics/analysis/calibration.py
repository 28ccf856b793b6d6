"""Calibrate judges against human labels (:func:`calibrate`): can their scores be trusted?

    >>> report = calibrate([Faithfulness(llm=judge)], rows, label_field="human_ok")
    >>> report.metrics["faithfulness"].aggregate.statistics["cohen_kappa"].value

The statistics are in :mod:`langchain_answer_metrics.analysis.stats`, the report's shape
in :mod:`~langchain_answer_metrics.analysis.calibration_report`; the scoring is the
runner's; the CLI builds the same report from its ``--out`` records."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import langchain_answer_metrics.analysis.stats as stats
from langchain_answer_metrics.analysis.calibration_report import (
    CalibrationBin,
    CalibrationReport,
    Confusion,
    Disagreement,
    Estimate,
    JudgeCalibration,
    LabelType,
    MetricCalibration,
    PanelAgreement,
)
from langchain_answer_metrics.core.result import MetricResult
from langchain_answer_metrics.judging.limits import DEFAULT_MAX_CONCURRENCY
from langchain_answer_metrics.mapping import SampleMapping
from langchain_answer_metrics.metrics.base import AnswerMetric
from langchain_answer_metrics.run.runner import evaluate

DEFAULT_THRESHOLD = 0.5
WORST = 5


@dataclass(slots=True)  # one per labelled sample and metric, held for the statistics
class Judged:
    """One labelled sample as a metric scored it: the input of :func:`calibration_of`."""

    id: str
    label: float | bool
    score: float | None  # None: failed, or not applicable
    not_applicable: bool = False
    per_model: Mapping[str, float] = field(default_factory=dict)
    reason: str = ""
    claims: Sequence[str] = ()
    response: str | None = None


def parse_label(value: Any) -> float | bool | None:
    """A person's label: a bool (or pass/fail, true/false, yes/no) or a number in [0, 1];
    None when absent. Anything else is a ValueError."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        word = value.strip().lower()
        if word in {"pass", "true", "yes"}:
            return True
        if word in {"fail", "false", "no"}:
            return False
        try:
            value = float(word)
        except ValueError:
            raise ValueError(f"label {value!r} is neither pass/fail nor a number") from None
    if isinstance(value, (int, float)) and math.isfinite(value) and 0.0 <= value <= 1.0:
        return float(value)
    raise ValueError(f"label {value!r} is not a bool or a number in [0, 1]")


def label_type(labels: Iterable[float | bool]) -> LabelType:
    kinds = {isinstance(label, bool) for label in labels}
    if kinds == {True, False}:
        raise ValueError("the labels mix pass/fail and numbers; use one kind")
    return "binary" if kinds == {True} else "continuous"


def _estimates(raw: Mapping[str, tuple[float, float | None, float | None]]) -> dict[str, Estimate]:
    def clean(number: float | None) -> float | None:
        return None if number is None or not math.isfinite(number) else number

    return {
        name: Estimate(value=clean(v), ci_low=clean(lo), ci_high=clean(hi))
        for name, (v, lo, hi) in raw.items()
    }


def _bins(scores: Sequence[float], labels: Sequence[float]) -> list[CalibrationBin]:
    bins = []
    for index in range(10):
        low, high = index / 10, (index + 1) / 10
        inside = [
            (s, y) for s, y in zip(scores, labels) if low <= s < high or (index == 9 and s == 1.0)
        ]
        if inside:
            bins.append(
                CalibrationBin(
                    low=low,
                    high=high,
                    count=len(inside),
                    mean_score=sum(s for s, _ in inside) / len(inside),
                    mean_label=sum(y for _, y in inside) / len(inside),
                )
            )
    return bins


def judge_calibration(
    scores: Sequence[float], labels: Sequence[float | bool], kind: LabelType, threshold: float
) -> JudgeCalibration:
    """One set of scores against the labels (same order, no missing values)."""
    values = [float(label) for label in labels]
    functions = (
        stats.binary_statistic_functions(threshold)
        if kind == "binary"
        else stats.CONTINUOUS_STATISTICS
    )
    report = JudgeCalibration(
        n=len(scores),
        statistics=_estimates(stats.bootstrap(functions, scores, values)),
        bins=_bins(scores, values),
    )
    if kind == "binary":
        x, y = np.asarray(scores, dtype=float), np.asarray(values, dtype=float)
        report.confusion = Confusion(
            threshold=threshold,
            **dict(zip(("tp", "fp", "fn", "tn"), stats.confusion(x, y, threshold))),
        )
        report.roc = [
            (t if math.isfinite(t) else 1.0, fpr, tpr)
            for t, fpr, tpr in stats.roc_curve(x, y)
            if math.isfinite(fpr) and math.isfinite(tpr)
        ]
    return report


def _none_if_nan(value: float) -> float | None:
    return value if math.isfinite(value) else None


def panel_agreement(items: Sequence[Judged], threshold: float) -> PanelAgreement:
    judges = sorted({model for item in items for model in item.per_model})
    if len(judges) < 2:
        return PanelAgreement(judges=judges)
    scores = [[item.per_model.get(judge) for item in items] for judge in judges]
    verdicts = [[None if s is None else float(s >= threshold) for s in row] for row in scores]
    pairwise: dict[str, float | None] = {}
    for (i, a), (j, b) in itertools.combinations(enumerate(judges), 2):
        both = [(x, y) for x, y in zip(verdicts[i], verdicts[j]) if x is not None and y is not None]
        kappa = stats.kappa_of([x for x, _ in both], [y for _, y in both])
        pairwise[f"{a} vs {b}"] = _none_if_nan(kappa)
    return PanelAgreement(
        judges=judges,
        alpha_interval=_none_if_nan(stats.krippendorff_alpha(scores, "interval")),
        alpha_nominal=_none_if_nan(stats.krippendorff_alpha(verdicts, "nominal")),
        alpha_interval_ci=stats.krippendorff_alpha_ci(scores, "interval"),
        alpha_nominal_ci=stats.krippendorff_alpha_ci(verdicts, "nominal"),
        pairwise_kappa=pairwise,
    )


def calibration_of(
    key: str, items: Sequence[Judged], *, threshold: float | None = None
) -> MetricCalibration:
    """The calibration of one metric from its labelled, scored samples."""
    threshold = DEFAULT_THRESHOLD if threshold is None else threshold
    scored = [item for item in items if item.score is not None]
    kind = label_type(item.label for item in items) if items else "continuous"
    aggregate = judge_calibration(
        [item.score for item in scored if item.score is not None],
        [item.label for item in scored],
        kind,
        threshold,
    )
    judges = {}
    for judge in sorted({model for item in scored for model in item.per_model}):
        rated = [item for item in scored if judge in item.per_model]
        judges[judge] = judge_calibration(
            [item.per_model[judge] for item in rated],
            [item.label for item in rated],
            kind,
            threshold,
        )
    worst = sorted(
        (item for item in scored if abs(float(item.label) - (item.score or 0.0)) > 1e-9),
        key=lambda item: -abs(float(item.label) - (item.score or 0.0)),
    )
    return MetricCalibration(
        key=key,
        label_type=kind,
        threshold=threshold,
        aggregate=aggregate,
        judges=judges,
        agreement=panel_agreement(scored, threshold),
        disagreements=[
            Disagreement(
                id=item.id,
                label=float(item.label),
                score=float(item.score or 0.0),
                gap=abs(float(item.label) - float(item.score or 0.0)),
                response=item.response,
                reason=item.reason,
                per_model=dict(item.per_model),
                claims=list(item.claims),
            )
            for item in worst[:WORST]
        ],
        errors=sum(item.score is None and not item.not_applicable for item in items),
        not_applicable=sum(item.not_applicable for item in items),
    )


def result_claims(result: MetricResult) -> list[str]:
    """The claims a result's judges checked, one line each: ``model: [verdict] claim``."""
    details: Any = result.details
    inner = getattr(details, "factual_correctness", None)
    if inner is not None:  # AnswerCorrectness: the claims of its factual part
        details = inner.details
    lines = []
    for model, model_details in (getattr(details, "models", None) or {}).items():
        by_side = getattr(model_details, "claims_by_side", None)
        if by_side is not None:
            for side, claims in by_side().items():
                lines += [f"{model}: [{claim.verdict}] ({side}) {claim.claim}" for claim in claims]
        elif hasattr(model_details, "verdict"):
            lines.append(f"{model}: {model_details.verdict}")
    return lines


def calibrate(
    metrics: Sequence[AnswerMetric],
    labelled: Iterable[Mapping[str, Any]],
    *,
    label_field: str = "label",
    thresholds: Mapping[str, float] | None = None,
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
) -> CalibrationReport:
    """Score ``labelled`` rows with ``metrics`` through the runner, against their labels.

    Args:
        metrics: the metrics to calibrate; each judge of a panel (``per_model``) is too.
        labelled: dicts with the sample's fields, an optional ``id`` and the label.
        label_field: the label's key: pass/fail (a bool) or a score in [0, 1].
        thresholds: per metric key, where pass/fail is cut (default: the metric's, else 0.5);
            to calibrate SemanticSimilarity's raw score, set its threshold here, not on it.
        max_concurrency: model requests in flight at most, as for ``evaluate_dataset``.

    Returns:
        Per metric, with bootstrap 95% CIs: for pass/fail labels accuracy, precision, recall, F1,
        Cohen's kappa, ROC AUC, the confusion matrix, best thresholds (F1, Youden's J); for scores
        Pearson, Spearman, Kendall, MAE; the judges' agreement (Krippendorff's alpha, kappa), worst
        disagreements. Unlabelled, failed, not applicable rows: counted apart.

    Raises:
        ValueError: a label neither pass/fail nor in [0, 1], or labels of both kinds.

    Example:
        >>> report = calibrate([FactualCorrectness(llm=judge)], labelled_rows)
        >>> report.metrics["factual_correctness"].aggregate.statistics["cohen_kappa"].value
    """
    rows = list(labelled)
    mapping = SampleMapping.for_rows()
    kept, labels, ids = [], [], []
    for index, row in enumerate(rows):
        label = parse_label(row.get(label_field))
        if label is None:
            continue
        # Every field found, for every metric (an agent metric reads the messages too).
        kept.append(mapping.fields_of(row))
        labels.append(label)
        ids.append(str(row.get("id", index + 1)))
    results = evaluate(kept, metrics, max_concurrency=max_concurrency) if kept else []
    report = CalibrationReport(unlabelled=len(rows) - len(kept))
    for metric in metrics:
        items = []
        for row_id, label, sample, scored in zip(ids, labels, kept, results):
            outcome = scored.results.get(metric.key)
            result = outcome if isinstance(outcome, MetricResult) else None
            items.append(
                Judged(
                    id=row_id,
                    label=label,
                    score=None if result is None else result.score,
                    not_applicable=result is not None and result.not_applicable is not None,
                    per_model={} if result is None else result.per_model,
                    reason="" if result is None else result.reason,
                    claims=[] if result is None else result_claims(result),
                    response=sample.get("response"),
                )
            )
        threshold = (thresholds or {}).get(metric.key, metric.threshold)
        report.metrics[metric.key] = calibration_of(metric.key, items, threshold=threshold)
    return report


__all__ = [  # the report's models are re-exported: callers import them from here
    "DEFAULT_THRESHOLD",
    "CalibrationBin",
    "CalibrationReport",
    "Confusion",
    "Disagreement",
    "Estimate",
    "JudgeCalibration",
    "Judged",
    "LabelType",
    "MetricCalibration",
    "PanelAgreement",
    "calibrate",
    "calibration_of",
    "judge_calibration",
    "label_type",
    "panel_agreement",
    "parse_label",
    "result_claims",
]
