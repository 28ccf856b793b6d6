"""Answer-quality metrics as LangChain Runnables and LangSmith evaluators.

    >>> from langchain_answer_metrics import FactualCorrectness
    >>> FactualCorrectness(llm=chat_model).score(response="...", reference="...")

Names are imported on first use, so ``import langchain_answer_metrics`` stays light and
the CLI can start without loading what a command does not need.
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
        AgentGoalAccuracy,
        AnswerCorrectness,
        AnswerMetric,
        AspectCritic,
        Categories,
        ContextPrecision,
        ContextRecall,
        ContextRelevance,
        Continuous,
        ConversationCompleteness,
        CustomJudge,
        FactualCorrectness,
        Faithfulness,
        KnowledgeRetention,
        PairSample,
        PairwisePreference,
        PassFail,
        PerTurn,
        ResponseRelevance,
        RoleAdherence,
        Scale,
        SemanticSimilarity,
        ToolCallF1,
        TopicAdherence,
        TrajectoryJudge,
        TrajectoryMatch,
        per_turn,
    )
    from langchain_answer_metrics.metrics import (
        ResponseRelevancy as ResponseRelevancy,  # an alias: not in __all__
    )
    from langchain_answer_metrics.run.runner import (
        MetricError,
        SampleResults,
        aevaluate_dataset,
        astream_evaluate,
        evaluate_dataset,
        stream_evaluate,
    )
    from langchain_answer_metrics.run.summary import MetricSummary, summarize
    from langchain_answer_metrics.run.summary import (  # deprecated: not in __all__
        summarize_results as summarize_results,
    )
    from langchain_answer_metrics.simulation import Scenario, SimulationResult, simulate

_EXPORTS: dict[str, str] = {
    "AgentSample": "agents",
    "ASPECTS": "metrics",
    "AgentGoalAccuracy": "metrics",
    "AllModelsFailedError": "judging.panel",
    "AlignmentResult": "analysis",
    "AnswerCorrectness": "metrics",
    "AnswerMetric": "metrics",
    "AspectCritic": "metrics",
    "CalibrationReport": "analysis",
    "Categories": "metrics",
    "Comparison": "analysis",
    "ContextPrecision": "metrics",
    "ContextRecall": "metrics",
    "ContextRelevance": "metrics",
    "Continuous": "metrics",
    "ConversationCompleteness": "metrics",
    "ConversationSample": "conversations",
    "CostEstimate": "costs",
    "CustomJudge": "metrics",
    "Embedder": "judging.judges",
    "FactualCorrectness": "metrics",
    "Faithfulness": "metrics",
    "InvalidSampleError": "core.sample",
    "Judge": "judging.judges",
    "JudgesDisagreeError": "judging.panel",
    "KnowledgeRetention": "metrics",
    "MetricError": "run.runner",
    "MetricEvaluator": "adapters.langsmith.evaluators",
    "MetricResult": "core.result",
    "MetricSummary": "run.summary",
    "MissingFieldError": "mapping",
    "ModelFailure": "core.result",
    "PairSample": "metrics",
    "PairwisePreference": "metrics",
    "PassFail": "metrics",
    "PerTurn": "metrics",
    "Price": "core.prices",
    "ResponseRelevance": "metrics",
    "ResponseRelevancy": "metrics",  # RAGAS's name: an alias, not in __all__
    "RetryPolicy": "judging.retry",
    "RoleAdherence": "metrics",
    "Sample": "core.sample",
    "SampleMapping": "mapping",
    "SampleResults": "run.runner",
    "Scale": "metrics",
    "Scenario": "simulation",
    "SemanticSimilarity": "metrics",
    "SimulationResult": "simulation",
    "StructuredOutputError": "judging.errors",
    "TokenUsage": "core.result",
    "TrajectoryJudge": "metrics",
    "ToolCallF1": "metrics",
    "TopicAdherence": "metrics",
    "TrajectoryMatch": "metrics",
    "aestimate": "costs",
    "aevaluate_dataset": "run.runner",
    "astream_evaluate": "run.runner",
    "align": "analysis",
    "per_turn": "metrics",
    "calibrate": "analysis",
    "compare": "analysis",
    "load_aligned": "analysis",
    "estimate": "costs",
    "evaluate_dataset": "run.runner",
    "evaluators": "adapters.langsmith.evaluators",
    "simulate": "simulation",
    "stream_evaluate": "run.runner",
    "summarize": "run.summary",
    "summarize_results": "run.summary",  # deprecated (it warns), not in __all__
    "ComparativeEvaluator": "adapters.langsmith.comparative",
    "comparative_evaluator": "adapters.langsmith.comparative",
    "FunctionEvaluator": "adapters.langsmith.evaluators",
    "evaluator": "adapters.langsmith.evaluators",
    "function_evaluator": "adapters.langsmith.evaluators",
    "MetricSummaryEvaluator": "adapters.langsmith.summary",
}

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
__version__ = "0.1.0"

# The import paths that moved in 0.2.0 keep working, with a warning, until 0.3.0.
_install_moved_paths()


# Old names, kept for one release: they clash with LangSmith's evaluate / aevaluate.
_DEPRECATED: dict[str, str] = {"evaluate": "evaluate_dataset", "aevaluate": "aevaluate_dataset"}


def __getattr__(name: str) -> Any:
    if name in _DEPRECATED:
        new = _DEPRECATED[name]
        warnings.warn(
            f"langchain_answer_metrics.{name} is deprecated and goes in the next release: "
            f"use {new} (same arguments), whose name does not clash with LangSmith's {name}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module("langchain_answer_metrics.run.runner"), new)
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'langchain_answer_metrics' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"langchain_answer_metrics.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
