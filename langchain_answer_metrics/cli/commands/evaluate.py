"""``answer-metrics evaluate DATA``: score every sample of a data file.

The options and every row are checked first (:func:`~..run_checks.check_run`): their
errors come before the run's machinery (LangChain, the metrics, the models) is loaded;
then :func:`~langchain_answer_metrics.cli.run.run_checked` scores, writes and gates.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_answer_metrics.cli.command_options import EvaluateOptions
from langchain_answer_metrics.cli.interrupts import CTRL_C
from langchain_answer_metrics.cli.run_checks import check_run


def run_evaluate(options: EvaluateOptions) -> int:
    """``evaluate``: score ``options.data``; the exit code."""
    assert options.data is not None
    return score_file(options, title=str(options.data), default_metrics=[])


def score_file(options: EvaluateOptions, *, title: str, default_metrics: Sequence[str]) -> int:
    """Check the options and ``options.data``, then score it (``default_metrics`` without
    ``--metric``); ``title`` opens the run's first line."""
    assert options.data is not None
    CTRL_C.starting_run()  # from now on Ctrl-C is honoured at a safe point, exit 130
    checked = check_run(options, options.data, default_metrics)
    from langchain_answer_metrics.cli.run import run_checked

    return run_checked(options, checked, title=title)
