"""A run as one object: :class:`RunOptions` (validated once) and the :class:`Run` that
executes them, with one collaborator per job (``reading``: the read-ahead window and
admission; ``keeping``: the checkpoint; ``halting``: limits and the circuit breaker;
``progress``). The public functions of :mod:`~langchain_answer_metrics.runner` are thin
faces over it.

    >>> rows = await Run(samples, metrics, RunOptions(max_concurrency=8)).results()
"""

from langchain_answer_metrics.run.engine import Run
from langchain_answer_metrics.run.options import RunOptions

__all__ = ["Run", "RunOptions"]
