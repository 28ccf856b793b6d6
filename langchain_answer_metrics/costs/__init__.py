"""Cost before a run: :func:`estimate` (a dry run, no request) and its token counting.

Prices are in :mod:`langchain_answer_metrics.core.prices`.
"""

from langchain_answer_metrics.core.prices import BUILTIN_PRICES, PRICES_TAKEN, Price, price_for
from langchain_answer_metrics.costs.estimator import (
    CostEstimate,
    EstimateTotal,
    ModelEstimate,
    aestimate,
    combine,
    estimate,
)
from langchain_answer_metrics.costs.tokens import default_token_count

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
