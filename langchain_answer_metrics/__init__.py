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

if TYPE_CHECKING:
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
    from langchain_answer_metrics.costs import CostEstimate, aestimate, estimate
    from langchain_answer_metrics.integrations.langsmith_evaluators import (
        MetricEvaluator,
        evaluators,
    )
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
    from langchain_answer_metrics.prices import Price
    from langchain_answer_metrics.result import MetricResult, ModelFailure, TokenUsage
    from langchain_answer_metrics.runner import (
        MetricError,
        SampleResults,
        aevaluate_dataset,
        astream_evaluate,
        evaluate_dataset,
        stream_evaluate,
    )
    from langchain_answer_metrics.sample import InvalidSampleError, Sample
    from langchain_answer_metrics.simulation import Scenario, SimulationResult, simulate
    from langchain_answer_metrics.summary import MetricSummary, summarize
    from langchain_answer_metrics.summary import (  # deprecated: not in __all__
        summarize_results as summarize_results,
    )

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
    "InvalidSampleError": "sample",
    "Judge": "judging.judges",
    "JudgesDisagreeError": "judging.panel",
    "KnowledgeRetention": "metrics",
    "MetricError": "runner",
    "MetricEvaluator": "integrations.langsmith_evaluators",
    "MetricResult": "result",
    "MetricSummary": "summary",
    "MissingFieldError": "mapping",
    "ModelFailure": "result",
    "PairSample": "metrics",
    "PairwisePreference": "metrics",
    "PassFail": "metrics",
    "PerTurn": "metrics",
    "Price": "prices",
    "ResponseRelevance": "metrics",
    "ResponseRelevancy": "metrics",  # RAGAS's name: an alias, not in __all__
    "RetryPolicy": "judging.retry",
    "RoleAdherence": "metrics",
    "Sample": "sample",
    "SampleMapping": "mapping",
    "SampleResults": "runner",
    "Scale": "metrics",
    "Scenario": "simulation",
    "SemanticSimilarity": "metrics",
    "SimulationResult": "simulation",
    "StructuredOutputError": "judging.errors",
    "TokenUsage": "result",
    "TrajectoryJudge": "metrics",
    "ToolCallF1": "metrics",
    "TopicAdherence": "metrics",
    "TrajectoryMatch": "metrics",
    "aestimate": "costs",
    "aevaluate_dataset": "runner",
    "astream_evaluate": "runner",
    "align": "analysis",
    "per_turn": "metrics",
    "calibrate": "analysis",
    "compare": "analysis",
    "load_aligned": "analysis",
    "estimate": "costs",
    "evaluate_dataset": "runner",
    "evaluators": "integrations.langsmith_evaluators",
    "simulate": "simulation",
    "stream_evaluate": "runner",
    "summarize": "summary",
    "summarize_results": "summary",  # deprecated (it warns), not in __all__
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
    "InvalidSampleError",
    "Judge",
    "JudgesDisagreeError",
    "KnowledgeRetention",
    "MetricError",
    "MetricEvaluator",
    "MetricResult",
    "MetricSummary",
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
    "compare",
    "estimate",
    "evaluate_dataset",
    "evaluators",
    "load_aligned",
    "per_turn",
    "simulate",
    "stream_evaluate",
    "summarize",
]
__version__ = "0.1.0"


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
        return getattr(importlib.import_module("langchain_answer_metrics.runner"), new)
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'langchain_answer_metrics' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"langchain_answer_metrics.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
