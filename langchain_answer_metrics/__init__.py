"""Answer-quality metrics as LangChain Runnables and LangSmith evaluators.

    >>> from langchain_answer_metrics import FactualCorrectness
    >>> FactualCorrectness(llm=chat_model).score(response="...", reference="...")
"""

from langchain_answer_metrics.evaluators import MetricEvaluator, evaluators
from langchain_answer_metrics.judges import Embedder, Judge, RetryPolicy
from langchain_answer_metrics.mapping import MissingFieldError, SampleMapping
from langchain_answer_metrics.metrics import (
    ASPECTS,
    AnswerCorrectness,
    AnswerMetric,
    AspectCritic,
    FactualCorrectness,
    Faithfulness,
    SemanticSimilarity,
)
from langchain_answer_metrics.panel import AllModelsFailedError
from langchain_answer_metrics.result import MetricResult, ModelFailure, TokenUsage
from langchain_answer_metrics.sample import InvalidSampleError, Sample
from langchain_answer_metrics.structured import StructuredOutputError
from langchain_answer_metrics.summary import MetricSummary, summarize, summarize_results

__all__ = [
    "ASPECTS",
    "AllModelsFailedError",
    "AnswerCorrectness",
    "AnswerMetric",
    "AspectCritic",
    "Embedder",
    "FactualCorrectness",
    "Faithfulness",
    "InvalidSampleError",
    "Judge",
    "MetricEvaluator",
    "MetricResult",
    "MetricSummary",
    "MissingFieldError",
    "ModelFailure",
    "RetryPolicy",
    "Sample",
    "SampleMapping",
    "SemanticSimilarity",
    "StructuredOutputError",
    "TokenUsage",
    "evaluators",
    "summarize",
    "summarize_results",
]
__version__ = "0.1.0"
