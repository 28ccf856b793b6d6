"""The metrics, one module each.

Names are imported on first use (like the package root), so what reads only the registry
(the command line's ``--help``) loads no metric. The metrics of the registry
(:mod:`.registry`) are exported by the names it gives them (:mod:`.exports`); the table
below holds the other names: the bases, the output kinds and the metrics the registry
does not build (a CustomJudge is declared by the user, a PairwisePreference scores pairs).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_answer_metrics.metrics.aspects import ASPECTS
    from langchain_answer_metrics.metrics.base import AnswerMetric
    from langchain_answer_metrics.metrics.custom_judge import CustomJudge
    from langchain_answer_metrics.metrics.judge_outputs import (
        Categories,
        Continuous,
        PassFail,
        Scale,
    )
    from langchain_answer_metrics.metrics.pairwise import PairSample, PairwisePreference

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
        "AnswerCorrectness",
        "AnswerMetric",
        "AspectCritic",
        "Categories",
        "ContextPrecision",
        "ContextRecall",
        "ContextRelevance",
        "Continuous",
        "ConversationCompleteness",
        "CustomJudge",
        "FactualCorrectness",
        "Faithfulness",
        "KnowledgeRetention",
        "PairSample",
        "PairwisePreference",
        "PassFail",
        "PerTurn",
        "ResponseRelevance",
        "RoleAdherence",
        "Scale",
        "SemanticSimilarity",
        "ToolCallF1",
        "TopicAdherence",
        "TrajectoryJudge",
        "TrajectoryMatch",
    ]
    # registry: end

_MODULES: dict[str, str] = {
    "ASPECTS": "aspects",
    "AnswerMetric": "base",
    "CustomJudge": "custom_judge",
    "Categories": "judge_outputs",
    "Continuous": "judge_outputs",
    "PassFail": "judge_outputs",
    "Scale": "judge_outputs",
    "PairSample": "pairwise",
    "PairwisePreference": "pairwise",
}


def _registered() -> dict[str, str]:
    """The registry's metrics: class name (or alias) -> module. A lowercase name is never
    one (classes are CapWords): ``from langchain_answer_metrics.metrics import
    registry`` asks this module for the submodule first, and must not read the registry
    while the registry is being imported."""
    from langchain_answer_metrics.metrics.exports import metric_exports

    return metric_exports()


def __getattr__(name: str) -> Any:
    if name == "__all__":
        from langchain_answer_metrics.metrics.exports import metric_names

        return sorted({*_MODULES, *metric_names()})
    module = _MODULES.get(name)
    if module is not None:
        module = f"{__name__}.{module}"
    elif name[:1].isupper():
        module = _registered().get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_MODULES, *_registered()])
