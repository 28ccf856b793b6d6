"""Analysis over scored runs: calibrating judges against human labels, comparing two runs,
aligning judges with labels.

:func:`~langchain_answer_metrics.analysis.calibration.calibrate`,
:func:`~langchain_answer_metrics.analysis.comparison.compare` and
:func:`~langchain_answer_metrics.analysis.alignment.align`; the statistics they use are
in :mod:`langchain_answer_metrics.analysis.stats`.
"""

from langchain_answer_metrics.analysis.aligned_metric import AlignedMetric, load_aligned
from langchain_answer_metrics.analysis.alignment import AlignmentResult, AlignmentStopped, align
from langchain_answer_metrics.analysis.calibration import CalibrationReport, calibrate
from langchain_answer_metrics.analysis.comparison import Comparison, compare

__all__ = [
    "AlignedMetric",
    "AlignmentResult",
    "AlignmentStopped",
    "CalibrationReport",
    "Comparison",
    "align",
    "calibrate",
    "compare",
    "load_aligned",
]
