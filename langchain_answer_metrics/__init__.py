"""Answer-quality metrics as LangChain Runnables and LangSmith evaluators.

    >>> from langchain_answer_metrics import FactualCorrectness
    >>> FactualCorrectness(llm=chat_model).score(response="...", reference="...")

Names are imported on first use, so ``import langchain_answer_metrics`` stays light and
the CLI can start without loading what a command does not need.

The metrics of the registry are exported by the names the registry gives them
(``metrics/registry.py``, read through ``metrics/exports.py``): a metric is its module,
its step and one registry line, and its name is written nowhere here. The table below
holds every other name. For type checkers, the generated part of the ``TYPE_CHECKING``
blocks lists the registry's metrics and ``__all__`` (``python -m
langchain_answer_metrics.metrics.exports --write``; tests/test_exports.py checks it).
"""

from __future__ import annotations

import importlib
import warnings
from typing import TYPE_CHECKING, Any

from langchain_answer_metrics.core.moved import install as _install_moved_paths

if TYPE_CHECKING:
    from langchain_answer_metrics.adapters.langsmith.comparative import (
        ComparativeEvaluator,
        comparative_evaluator,
    )
    from langchain_answer_metrics.adapters.langsmith.evaluators import (
        FunctionEvaluator,
        MetricEvaluator,
        evaluator,
        evaluators,
        function_evaluator,
    )
    from langchain_answer_metrics.adapters.langsmith.summary import MetricSummaryEvaluator
    from langchain_answer_metrics.agents import AgentSample
    from langchain_answer_metrics.analysis import (
        AlignmentResult,
        CalibrationReport,
        Comparison,
        align,
        calibrate,
        compare,
        load_aligned,
    )
    from langchain_answer_metrics.conversations import ConversationSample
    from langchain_answer_metrics.core.prices import Price
    from langchain_answer_metrics.core.result import MetricResult, ModelFailure, TokenUsage
    from langchain_answer_metrics.core.sample import InvalidSampleError, Sample
    from langchain_answer_metrics.costs import CostEstimate, aestimate, estimate
    from langchain_answer_metrics.judging.errors import StructuredOutputError
    from langchain_answer_metrics.judging.judges import Embedder, Judge
    from langchain_answer_metrics.judging.panel import AllModelsFailedError, JudgesDisagreeError
    from langchain_answer_metrics.judging.retry import RetryPolicy
    from langchain_answer_metrics.mapping import MissingFieldError, SampleMapping
    from langchain_answer_metrics.metrics import (
        ASPECTS,
        AnswerMetric,
        Categories,
        Continuous,
        CustomJudge,
        PairSample,
        PairwisePreference,
        PassFail,
        Scale,
    )
    from langchain_answer_metrics.metrics.per_turn import per_turn
    from langchain_answer_metrics.run.runner import (
        MetricError,
        SampleResults,
        aevaluate_dataset,
        astream_evaluate,
        evaluate_dataset,
        stream_evaluate,
    )
    from langchain_answer_metrics.run.summary import MetricSummary, summarize
    from langchain_answer_metrics.run.summary import (
        summarize_results as summarize_results,  # deprecated: unlisted in __all__
    )
    from langchain_answer_metrics.simulation import Scenario, SimulationResult, simulate

if TYPE_CHECKING:
    # registry: begin (generated: python -m langchain_answer_metrics.metrics.exports --write)
    from langchain_answer_metrics.metrics.agent_goal_accuracy import (
        AgentGoalAccuracy as AgentGoalAccuracy,
    )
    from langchain_answer_metrics.metrics.answer_correctness import (
        AnswerCorrectness as AnswerCorrectness,
    )
    from langchain_answer_metrics.metrics.aspect_critic import AspectCritic as AspectCritic
    from langchain_answer_metrics.metrics.context_precision import (
        ContextPrecision as ContextPrecision,
    )
    from langchain_answer_metrics.metrics.context_recall import ContextRecall as ContextRecall
    from langchain_answer_metrics.metrics.context_relevance import (
        ContextRelevance as ContextRelevance,
    )
    from langchain_answer_metrics.metrics.conversation_completeness import (
        ConversationCompleteness as ConversationCompleteness,
    )
    from langchain_answer_metrics.metrics.factual_correctness import (
        FactualCorrectness as FactualCorrectness,
    )
    from langchain_answer_metrics.metrics.faithfulness import Faithfulness as Faithfulness
    from langchain_answer_metrics.metrics.knowledge_retention import (
        KnowledgeRetention as KnowledgeRetention,
    )
    from langchain_answer_metrics.metrics.per_turn import PerTurn as PerTurn
    from langchain_answer_metrics.metrics.response_relevancy import (
        ResponseRelevance as ResponseRelevance,
    )
    from langchain_answer_metrics.metrics.response_relevancy import (
        ResponseRelevancy as ResponseRelevancy,
    )
    from langchain_answer_metrics.metrics.role_adherence import RoleAdherence as RoleAdherence
    from langchain_answer_metrics.metrics.semantic_similarity import (
        SemanticSimilarity as SemanticSimilarity,
    )
    from langchain_answer_metrics.metrics.tool_call_f1 import ToolCallF1 as ToolCallF1
    from langchain_answer_metrics.metrics.topic_adherence import TopicAdherence as TopicAdherence
    from langchain_answer_metrics.metrics.trajectory_judge import TrajectoryJudge as TrajectoryJudge
    from langchain_answer_metrics.metrics.trajectory_match import TrajectoryMatch as TrajectoryMatch

    __all__ = [
        "ASPECTS",
        "AgentGoalAccuracy",
        "AgentSample",
        "AlignmentResult",
        "AllModelsFailedError",
        "AnswerCorrectness",
        "AnswerMetric",
        "AspectCritic",
        "CalibrationReport",
        "Categories",
        "ComparativeEvaluator",
        "Comparison",
        "ContextPrecision",
        "ContextRecall",
        "ContextRelevance",
        "Continuous",
        "ConversationCompleteness",
        "ConversationSample",
        "CostEstimate",
        "CustomJudge",
        "Embedder",
        "FactualCorrectness",
        "Faithfulness",
        "FunctionEvaluator",
        "InvalidSampleError",
        "Judge",
        "JudgesDisagreeError",
        "KnowledgeRetention",
        "MetricError",
        "MetricEvaluator",
        "MetricResult",
        "MetricSummary",
        "MetricSummaryEvaluator",
        "MissingFieldError",
        "ModelFailure",
        "PairSample",
        "PairwisePreference",
        "PassFail",
        "PerTurn",
        "Price",
        "ResponseRelevance",
        "RetryPolicy",
        "RoleAdherence",
        "Sample",
        "SampleMapping",
        "SampleResults",
        "Scale",
        "Scenario",
        "SemanticSimilarity",
        "SimulationResult",
        "StructuredOutputError",
        "TokenUsage",
        "ToolCallF1",
        "TopicAdherence",
        "TrajectoryJudge",
        "TrajectoryMatch",
        "aestimate",
        "aevaluate_dataset",
        "align",
        "astream_evaluate",
        "calibrate",
        "comparative_evaluator",
        "compare",
        "estimate",
        "evaluate_dataset",
        "evaluator",
        "evaluators",
        "function_evaluator",
        "load_aligned",
        "per_turn",
        "simulate",
        "stream_evaluate",
        "summarize",
    ]
    # registry: end

# Every name but the registry's metrics: name -> the module it is imported from.
_EXPORTS: dict[str, str] = {
    "AgentSample": "agents",
    "ASPECTS": "metrics",
    "AllModelsFailedError": "judging.panel",
    "AlignmentResult": "analysis",
    "AnswerMetric": "metrics",
    "CalibrationReport": "analysis",
    "Categories": "metrics",
    "Comparison": "analysis",
    "Continuous": "metrics",
    "ConversationSample": "conversations",
    "CostEstimate": "costs",
    "CustomJudge": "metrics",
    "Embedder": "judging.judges",
    "InvalidSampleError": "core.sample",
    "Judge": "judging.judges",
    "JudgesDisagreeError": "judging.panel",
    "MetricError": "run.runner",
    "MetricEvaluator": "adapters.langsmith.evaluators",
    "MetricResult": "core.result",
    "MetricSummary": "run.summary",
    "MissingFieldError": "mapping",
    "ModelFailure": "core.result",
    "PairSample": "metrics",
    "PairwisePreference": "metrics",
    "PassFail": "metrics",
    "Price": "core.prices",
    "RetryPolicy": "judging.retry",
    "Sample": "core.sample",
    "SampleMapping": "mapping",
    "SampleResults": "run.runner",
    "Scale": "metrics",
    "Scenario": "simulation",
    "SimulationResult": "simulation",
    "StructuredOutputError": "judging.errors",
    "TokenUsage": "core.result",
    "aestimate": "costs",
    "aevaluate_dataset": "run.runner",
    "astream_evaluate": "run.runner",
    "align": "analysis",
    "per_turn": "metrics.per_turn",
    "calibrate": "analysis",
    "compare": "analysis",
    "load_aligned": "analysis",
    "estimate": "costs",
    "evaluate_dataset": "run.runner",
    "evaluators": "adapters.langsmith.evaluators",
    "simulate": "simulation",
    "stream_evaluate": "run.runner",
    "summarize": "run.summary",
    "ComparativeEvaluator": "adapters.langsmith.comparative",
    "comparative_evaluator": "adapters.langsmith.comparative",
    "FunctionEvaluator": "adapters.langsmith.evaluators",
    "evaluator": "adapters.langsmith.evaluators",
    "function_evaluator": "adapters.langsmith.evaluators",
    "MetricSummaryEvaluator": "adapters.langsmith.summary",
}

# Names that still import, unlisted in __all__: summarize_results warns (until 0.3.0).
_UNLISTED: dict[str, str] = {"summarize_results": "run.summary"}

__version__ = "0.1.0"

# The import paths that moved in 0.2.0 keep working, with a warning, until 0.3.0.
_install_moved_paths()


# Old names, kept for one release: they clash with LangSmith's evaluate / aevaluate.
_DEPRECATED: dict[str, str] = {"evaluate": "evaluate_dataset", "aevaluate": "aevaluate_dataset"}


def _registered() -> dict[str, str]:
    """The registry's metrics: class name (or alias) -> its module (read on first use)."""
    from langchain_answer_metrics.metrics.exports import metric_exports

    return metric_exports()


def __getattr__(name: str) -> Any:
    if name == "__all__":  # not kept: a metric registered later is in it
        from langchain_answer_metrics.metrics.exports import metric_names

        return sorted({*_EXPORTS, *metric_names()})
    if name in _DEPRECATED:
        new = _DEPRECATED[name]
        warnings.warn(
            f"langchain_answer_metrics.{name} is deprecated and goes in the next release: "
            f"use {new} (same arguments), whose name does not clash with LangSmith's {name}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module("langchain_answer_metrics.run.runner"), new)
    module = _EXPORTS.get(name) or _UNLISTED.get(name)
    if module is not None:
        module = f"langchain_answer_metrics.{module}"
    elif name[:1].isupper():  # a class: perhaps a metric of the registry
        module = _registered().get(name)
    if module is None:
        raise AttributeError(f"module 'langchain_answer_metrics' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS, *_registered()])
