"""The five answer metrics, one module each."""

from langchain_answer_metrics.metrics.answer_correctness import AnswerCorrectness
from langchain_answer_metrics.metrics.aspect_critic import ASPECTS, AspectCritic
from langchain_answer_metrics.metrics.base import AnswerMetric
from langchain_answer_metrics.metrics.context_precision import ContextPrecision
from langchain_answer_metrics.metrics.context_recall import ContextRecall
from langchain_answer_metrics.metrics.context_relevance import ContextRelevance
from langchain_answer_metrics.metrics.custom_judge import CustomJudge
from langchain_answer_metrics.metrics.factual_correctness import FactualCorrectness
from langchain_answer_metrics.metrics.faithfulness import Faithfulness
from langchain_answer_metrics.metrics.judge_outputs import (
    Categories,
    Continuous,
    PassFail,
    Scale,
)
from langchain_answer_metrics.metrics.pairwise import PairSample, PairwisePreference
from langchain_answer_metrics.metrics.response_relevancy import ResponseRelevancy
from langchain_answer_metrics.metrics.semantic_similarity import SemanticSimilarity
from langchain_answer_metrics.metrics.tool_call_f1 import ToolCallF1
from langchain_answer_metrics.metrics.trajectory_match import TrajectoryMatch

__all__ = [
    "ASPECTS",
    "AnswerCorrectness",
    "AnswerMetric",
    "AspectCritic",
    "Categories",
    "ContextPrecision",
    "ContextRecall",
    "ContextRelevance",
    "Continuous",
    "CustomJudge",
    "FactualCorrectness",
    "Faithfulness",
    "PairSample",
    "PairwisePreference",
    "PassFail",
    "ResponseRelevancy",
    "Scale",
    "SemanticSimilarity",
    "ToolCallF1",
    "TrajectoryMatch",
]
