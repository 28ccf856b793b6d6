"""The metrics, one module each.

Names are imported on first use (like the package root), so what reads only the registry
(the command line's ``--help``) loads no metric.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_answer_metrics.metrics.agent_goal_accuracy import AgentGoalAccuracy
    from langchain_answer_metrics.metrics.answer_correctness import AnswerCorrectness
    from langchain_answer_metrics.metrics.aspect_critic import AspectCritic
    from langchain_answer_metrics.metrics.aspects import ASPECTS
    from langchain_answer_metrics.metrics.base import AnswerMetric
    from langchain_answer_metrics.metrics.context_precision import ContextPrecision
    from langchain_answer_metrics.metrics.context_recall import ContextRecall
    from langchain_answer_metrics.metrics.context_relevance import ContextRelevance
    from langchain_answer_metrics.metrics.conversation_completeness import (
        ConversationCompleteness,
    )
    from langchain_answer_metrics.metrics.custom_judge import CustomJudge
    from langchain_answer_metrics.metrics.factual_correctness import FactualCorrectness
    from langchain_answer_metrics.metrics.faithfulness import Faithfulness
    from langchain_answer_metrics.metrics.judge_outputs import (
        Categories,
        Continuous,
        PassFail,
        Scale,
    )
    from langchain_answer_metrics.metrics.knowledge_retention import KnowledgeRetention
    from langchain_answer_metrics.metrics.pairwise import PairSample, PairwisePreference
    from langchain_answer_metrics.metrics.per_turn import PerTurn, per_turn
    from langchain_answer_metrics.metrics.response_relevancy import (
        ResponseRelevance,
    )
    from langchain_answer_metrics.metrics.response_relevancy import (
        ResponseRelevancy as ResponseRelevancy,  # an alias: not in __all__
    )
    from langchain_answer_metrics.metrics.role_adherence import RoleAdherence
    from langchain_answer_metrics.metrics.semantic_similarity import SemanticSimilarity
    from langchain_answer_metrics.metrics.tool_call_f1 import ToolCallF1
    from langchain_answer_metrics.metrics.topic_adherence import TopicAdherence
    from langchain_answer_metrics.metrics.trajectory_judge import TrajectoryJudge
    from langchain_answer_metrics.metrics.trajectory_match import TrajectoryMatch

_MODULES: dict[str, str] = {
    "AgentGoalAccuracy": "agent_goal_accuracy",
    "AnswerCorrectness": "answer_correctness",
    "ASPECTS": "aspects",
    "AspectCritic": "aspect_critic",
    "AnswerMetric": "base",
    "ContextPrecision": "context_precision",
    "ContextRecall": "context_recall",
    "ContextRelevance": "context_relevance",
    "ConversationCompleteness": "conversation_completeness",
    "CustomJudge": "custom_judge",
    "KnowledgeRetention": "knowledge_retention",
    "PerTurn": "per_turn",
    "per_turn": "per_turn",
    "RoleAdherence": "role_adherence",
    "TopicAdherence": "topic_adherence",
    "FactualCorrectness": "factual_correctness",
    "Faithfulness": "faithfulness",
    "Categories": "judge_outputs",
    "Continuous": "judge_outputs",
    "PassFail": "judge_outputs",
    "Scale": "judge_outputs",
    "PairSample": "pairwise",
    "PairwisePreference": "pairwise",
    "ResponseRelevance": "response_relevancy",
    "ResponseRelevancy": "response_relevancy",  # RAGAS's name: an alias, not in __all__
    "SemanticSimilarity": "semantic_similarity",
    "ToolCallF1": "tool_call_f1",
    "TrajectoryJudge": "trajectory_judge",
    "TrajectoryMatch": "trajectory_match",
}

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
    "per_turn",
]


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_MODULES])
