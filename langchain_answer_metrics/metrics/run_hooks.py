"""What the runner asks a metric beyond scoring: its share of the request budget.

Kept apart from the Runnable surface (``metrics/base.py``): these methods serve the
runner's read-ahead window (``run/window.py``), not the metric's users. Every metric
inherits the defaults; SemanticSimilarity overrides both, since one embedding request
serves many samples. They stay on the metric, not in the run layer, because they are the
metric's own facts (SemanticSimilarity's ``abatch`` makes the same reservation) and a
metric of your own declares them in its own file (docs/architecture.md, "The metric
contract").

    >>> metric.samples_per_request()
    1
    >>> release = metric.reserve_requests([(0, sample)]); release()
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from langchain_core.runnables import RunnableConfig

from langchain_answer_metrics.core.sample import SampleLike

__all__ = ["RunnerHooks"]


def _nothing() -> None:
    return None


class RunnerHooks:
    """The runner's questions to a metric, with the answers of a metric whose samples each
    make their own requests."""

    def reserve_requests(
        self, samples: Sequence[tuple[float, SampleLike]], config: RunnableConfig | None = None
    ) -> Callable[[], None]:
        """Queue now, in the current run scope, what the later scoring of ``samples``
        (each with its position in the run) will send in requests shared across samples,
        so that those requests leave before the samples start. Returns what to call once
        the samples are done. Nothing by default (no shared requests known ahead)."""
        return _nothing

    def samples_per_request(self) -> int:
        """How many samples one request of this metric can serve at most (1: every
        sample makes its own). The runner keeps enough samples started to fill its
        request budget."""
        return 1
