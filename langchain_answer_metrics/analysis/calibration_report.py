"""What :func:`~langchain_answer_metrics.analysis.calibration.calibrate` reports: per
metric, its judges' scores against the human labels, their agreement and the worst
disagreements, and ``as_json()``, the shape ``calibrate --json`` writes. Data only: the
statistics are computed in :mod:`~langchain_answer_metrics.analysis.calibration`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

LabelType = Literal["binary", "continuous"]


class Estimate(BaseModel):
    """A statistic and its bootstrap 95% CI (None where it cannot be given)."""

    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None


class Confusion(BaseModel):
    """The judge's ``score >= threshold`` against the human pass/fail label."""

    threshold: float
    tp: int
    fp: int
    fn: int
    tn: int


class CalibrationBin(BaseModel):
    """Samples whose score falls in ``[low, high)``: their mean score and mean label."""

    low: float
    high: float
    count: int
    mean_score: float
    mean_label: float


class JudgeCalibration(BaseModel):
    """One judge's (or the panel aggregate's) scores against the labels."""

    n: int
    statistics: dict[str, Estimate] = Field(default_factory=dict)
    confusion: Confusion | None = None
    roc: list[tuple[float, float, float]] = Field(
        default_factory=list, description="(threshold, false positive rate, true positive rate)"
    )
    bins: list[CalibrationBin] = Field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        statistics = {name: estimate.model_dump() for name, estimate in self.statistics.items()}
        return {"n": {"value": self.n, "ci_low": None, "ci_high": None}, **statistics}


class PanelAgreement(BaseModel):
    """How much the panel's judges agree with each other (NaN-free: None if undefined)."""

    judges: list[str] = Field(default_factory=list)
    alpha_interval: float | None = Field(None, description="Krippendorff's alpha of scores")
    alpha_nominal: float | None = Field(None, description="Krippendorff's alpha of verdicts")
    alpha_interval_ci: tuple[float, float] | None = None
    alpha_nominal_ci: tuple[float, float] | None = None
    pairwise_kappa: dict[str, float | None] = Field(
        default_factory=dict, description="Cohen's kappa of verdicts, by 'judge-a vs judge-b'"
    )


class Disagreement(BaseModel):
    """A sample where the judges' score and the human label differ most."""

    id: str
    label: float
    score: float
    gap: float
    response: str | None = None
    reason: str = ""
    per_model: dict[str, float] = Field(default_factory=dict)
    claims: list[str] = Field(default_factory=list)


class MetricCalibration(BaseModel):
    key: str
    label_type: LabelType
    threshold: float
    aggregate: JudgeCalibration
    judges: dict[str, JudgeCalibration] = Field(default_factory=dict)
    agreement: PanelAgreement = Field(default_factory=PanelAgreement)
    disagreements: list[Disagreement] = Field(default_factory=list)
    errors: int = Field(0, description="Labelled samples the metric failed on (left out).")
    not_applicable: int = Field(0, description="Labelled samples it does not apply to (out).")

    def as_json(self) -> dict[str, Any]:
        """The machine-readable shape of ``calibrate --json``."""
        return {
            "label_type": self.label_type,
            "threshold": self.threshold,
            "errors": self.errors,
            "not_applicable": self.not_applicable,
            "aggregate": self.aggregate.as_json(),
            "judges": {label: judge.as_json() for label, judge in self.judges.items()},
            "krippendorff_alpha": _with_ci(
                self.agreement.alpha_interval, self.agreement.alpha_interval_ci
            ),
            "krippendorff_alpha_nominal": _with_ci(
                self.agreement.alpha_nominal, self.agreement.alpha_nominal_ci
            ),
            "pairwise_kappa": self.agreement.pairwise_kappa,
        }


def _with_ci(value: float | None, interval: tuple[float, float] | None) -> dict[str, Any]:
    low, high = interval if interval is not None else (None, None)
    return {"value": value, "ci_low": low, "ci_high": high}


class CalibrationReport(BaseModel):
    """What :func:`calibrate` returns: per metric, its judges against the labels.

    Attributes:
        metrics: per metric key, a ``MetricCalibration`` (``as_json()`` is ``--json``'s shape).
        unlabelled: samples without a usable label (left out).

    Example:
        >>> calibrate(metrics, rows).as_json()["faithfulness"]["aggregate"]["accuracy"]
    """

    metrics: dict[str, MetricCalibration] = Field(default_factory=dict)
    unlabelled: int = Field(0, description="Samples without a usable label (left out).")

    def as_json(self) -> dict[str, Any]:
        return {key: metric.as_json() for key, metric in self.metrics.items()}
