"""``calibrate``'s table on the terminal: per metric, a row per judge with the
statistics and their 95% CIs, the confusion table, the panel's agreement, the worst
disagreements."""

from __future__ import annotations

import sys
from typing import TextIO

from langchain_answer_metrics.analysis.calibration import (
    CalibrationReport,
    JudgeCalibration,
    MetricCalibration,
)
from langchain_answer_metrics.cli.output.tables import print_table
from langchain_answer_metrics.cli.output.terminal import for_terminal

BINARY_COLUMNS = (
    "accuracy",
    "precision",
    "recall",
    "f1",
    "cohen_kappa",
    "roc_auc",
    "best_threshold_f1",
    "best_threshold_youden",
)
CONTINUOUS_COLUMNS = ("pearson", "spearman", "kendall", "mae")


def _cell(judge: JudgeCalibration, name: str) -> str:
    estimate = judge.statistics.get(name)
    if estimate is None or estimate.value is None:
        return "-"
    if estimate.ci_low is None or estimate.ci_high is None:
        return f"{estimate.value:.2f}"
    return f"{estimate.value:.2f} [{estimate.ci_low:.2f},{estimate.ci_high:.2f}]"


def print_calibration(report: CalibrationReport, stream: TextIO | None = None) -> None:
    """Per metric: a row per judge (the aggregate first), the statistics with 95% CIs;
    to ``stream``, else standard output as it is when called."""
    stream = stream or sys.stdout
    for key, metric in report.metrics.items():
        columns = BINARY_COLUMNS if metric.label_type == "binary" else CONTINUOUS_COLUMNS
        print(
            for_terminal(
                f"{key} ({metric.label_type} labels, threshold "
                f"{metric.threshold:.2f}; 95% CI in brackets)"
            ),
            file=stream,
        )
        judges: dict[str, JudgeCalibration] = {"aggregate": metric.aggregate, **metric.judges}
        print_table(
            [("judge", "n", *columns)]
            + [
                (label, str(judge.n), *(_cell(judge, name) for name in columns))
                for label, judge in judges.items()
            ],
            stream,
        )
        _print_details(metric, stream)
        print("", file=stream)


def _print_details(metric: MetricCalibration, stream: TextIO) -> None:
    table = metric.aggregate.confusion
    if table is not None:
        print(
            f"confusion at {table.threshold:.2f}: TP {table.tp}  FP {table.fp}  "
            f"FN {table.fn}  TN {table.tn}",
            file=stream,
        )
    agreement = metric.agreement
    if len(agreement.judges) >= 2:

        def show(value: float | None) -> str:
            return "-" if value is None else f"{value:.2f}"

        kappas = ", ".join(f"{pair} {show(v)}" for pair, v in agreement.pairwise_kappa.items())
        print(
            for_terminal(
                f"panel agreement: Krippendorff's alpha {show(agreement.alpha_interval)} (scores), "
                f"{show(agreement.alpha_nominal)} (verdicts); Cohen's kappa {kappas}"
            ),
            file=stream,
        )
    if metric.errors:
        print(f"{metric.errors} labelled samples failed and are left out", file=stream)
    if metric.not_applicable:
        print(
            f"{metric.not_applicable} labelled samples are not applicable (no claims: "
            "abstentions) and are left out",
            file=stream,
        )
    if metric.disagreements:
        print("worst disagreements (human label vs score):", file=stream)
        for item in metric.disagreements:
            line = f"  {item.id}: label {item.label:.2f}, score {item.score:.2f}: {item.reason}"
            print(for_terminal(line[:200]), file=stream)
