"""The metrics, one module each."""

from langchain_answer_metrics.metrics.agent_goal_accuracy import AgentGoalAccuracy
from langchain_answer_metrics.metrics.answer_correctness import AnswerCorrectness
from langchain_answer_metrics.metrics.aspect_critic import ASPECTS, AspectCritic
from langchain_answer_metrics.metrics.base import AnswerMetric
from langchain_answer_metrics.metrics.context_precision import ContextPrecision
from langchain_answer_metrics.metrics.context_recall import ContextRecall
from langchain_answer_metrics.metrics.context_relevance import ContextRelevance
from langchain_answer_metrics.metrics.conversation_completeness import ConversationCompleteness
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
from langchain_answer_metrics.metrics.response_relevancy import ResponseRelevancy
from langchain_answer_metrics.metrics.role_adherence import RoleAdherence
from langchain_answer_metrics.metrics.semantic_similarity import SemanticSimilarity
from langchain_answer_metrics.metrics.tool_call_f1 import ToolCallF1
from langchain_answer_metrics.metrics.topic_adherence import TopicAdherence
from langchain_answer_metrics.metrics.trajectory_judge import TrajectoryJudge
from langchain_answer_metrics.metrics.trajectory_match import TrajectoryMatch

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
    "ResponseRelevancy",
    "RoleAdherence",
    "Scale",
    "SemanticSimilarity",
    "ToolCallF1",
    "TopicAdherence",
    "TrajectoryJudge",
    "TrajectoryMatch",
    "per_turn",
]
