"""The run wing: a dataset scored as one run, and what it gives back.

- :mod:`~langchain_answer_metrics.run.runner`: the public functions
  (``evaluate_dataset``, ``aevaluate_dataset``, ``stream_evaluate``,
  ``astream_evaluate``), thin faces over a :class:`Run`.
- :class:`RunOptions` (``options``, validated once) and the :class:`Run` that executes
  them (``engine``), with one collaborator per job: ``reading`` (the read-ahead window
  and admission), ``window`` (its size), ``keeping`` (the checkpoint), ``halting``
  (limits and the circuit breaker), ``progress``.
- What a run gives back (``results``, ``summary``) and what it may spend (``limits``,
  ``spend``), and what it would cost before it runs (``estimate``: the dry run, which
  sends no request; a budget's first sample is admitted on it); tables in and out
  (``tables``: DataFrames, Parquet); batch mode (``batch_mode``, ``batch_panel``).

Names are imported on first use, so importing one module of the wing (say
``run.summary``) does not load the engine.

    >>> rows = await Run(samples, metrics, RunOptions(max_concurrency=8)).results()
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_answer_metrics.run.engine import Run
    from langchain_answer_metrics.run.options import RunOptions
    from langchain_answer_metrics.run.runner import (
        aevaluate_dataset,
        astream_evaluate,
        evaluate_dataset,
        stream_evaluate,
    )

_EXPORTS = {
    "Run": "engine",
    "RunOptions": "options",
    "aevaluate_dataset": "runner",
    "astream_evaluate": "runner",
    "evaluate_dataset": "runner",
    "stream_evaluate": "runner",
}

__all__ = [
    "Run",
    "RunOptions",
    "aevaluate_dataset",
    "astream_evaluate",
    "evaluate_dataset",
    "stream_evaluate",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
