"""``langchain_answer_metrics.ray``: the Ray Data adapter under a short name.

    >>> from langchain_answer_metrics.ray import evaluate_dataset

Everything lives in :mod:`langchain_answer_metrics.adapters.ray` (needs the ``[ray]``
extra); importing this module does not import Ray itself.
"""

from langchain_answer_metrics.adapters.ray import (
    ActorShare,
    MetricFactory,
    MetricSpec,
    evaluate_dataset,
)

__all__ = ["ActorShare", "MetricFactory", "MetricSpec", "evaluate_dataset"]
