"""Analysis over scored runs: calibrating judges against human labels, comparing two runs.

:func:`~langchain_answer_metrics.analysis.calibration.calibrate` and
:func:`~langchain_answer_metrics.analysis.comparison.compare`; the statistics they use are
in :mod:`langchain_answer_metrics.analysis.stats`.
"""

from langchain_answer_metrics.analysis.calibration import CalibrationReport, calibrate
from langchain_answer_metrics.analysis.comparison import Comparison, compare

__all__ = ["CalibrationReport", "Comparison", "calibrate", "compare"]
