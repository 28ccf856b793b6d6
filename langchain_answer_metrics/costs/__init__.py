"""Cost before a run: :func:`estimate` (a dry run, no request), its token counting and
the prices, under one short name.

The estimate is a dry run of the run, so it lives in the run wing
(:mod:`langchain_answer_metrics.run.estimate`), which uses it itself: a budget's first
sample is admitted on it. This package is its face, as ``langchain_answer_metrics.ray`` is
the Ray adapter's: ``from langchain_answer_metrics.costs import estimate`` reads better
than the full path. Prices are in :mod:`langchain_answer_metrics.core.prices`.

    >>> from langchain_answer_metrics.costs import estimate
    >>> estimate(samples, [Faithfulness(llm=judge)]).total.requests
"""

from langchain_answer_metrics.core.prices import BUILTIN_PRICES, PRICES_TAKEN, Price, price_for
from langchain_answer_metrics.run.estimate.estimator import (
    CostEstimate,
    EstimateTotal,
    ModelEstimate,
    aestimate,
    combine,
    estimate,
)
from langchain_answer_metrics.run.estimate.tokens import default_token_count

__all__ = [
    "BUILTIN_PRICES",
    "PRICES_TAKEN",
    "CostEstimate",
    "EstimateTotal",
    "ModelEstimate",
    "Price",
    "aestimate",
    "combine",
    "default_token_count",
    "estimate",
    "price_for",
]
