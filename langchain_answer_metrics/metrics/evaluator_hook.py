"""Where ``metric.as_evaluator()`` finds the LangSmith adapter without the metrics importing it.

Arrows point down: the adapter (``integrations.langsmith_evaluators``) imports the
metrics and, when it is imported, registers its factories here. A metric asks
:func:`evaluator_factories`; if no adapter has registered yet, the package root loads the
default one through its lazy exports (``langchain_answer_metrics.MetricEvaluator``): the
root is the one place that wires the faces to the metrics.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["EvaluatorFactories", "evaluator_factories", "register_evaluator_factories"]

# The package root's lazy export whose import brings in (and registers) the default adapter.
DEFAULT_ADAPTER_EXPORT = "MetricEvaluator"


@dataclass(frozen=True)
class EvaluatorFactories:
    """How a metric becomes an evaluator; each is called as ``factory(metric, **mapping)``."""

    row: Callable[..., Any]
    """A LangSmith row evaluator (``RunEvaluator``), for ``metric.as_evaluator()``."""
    function: Callable[..., Any]
    """An ``(inputs, outputs, reference_outputs) -> dict`` evaluator, for
    ``metric.as_function_evaluator()``."""


_lock = threading.Lock()
_registered: EvaluatorFactories | None = None


def register_evaluator_factories(factories: EvaluatorFactories) -> None:
    """Make ``factories`` the ones every metric's ``as_*evaluator`` methods use."""
    global _registered
    with _lock:
        _registered = factories


def evaluator_factories() -> EvaluatorFactories:
    """The registered factories, loading the default adapter the first time."""
    if _registered is None:
        import langchain_answer_metrics

        getattr(langchain_answer_metrics, DEFAULT_ADAPTER_EXPORT)  # importing it registers it
    if _registered is None:
        raise RuntimeError("no LangSmith evaluator adapter has registered its factories")
    return _registered
