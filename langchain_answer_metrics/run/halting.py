"""How a run stops: a limit reached or the circuit breaker tripped, and the rows of the
samples it stopped before.

    >>> halting = Halting(scope, keys=["faithfulness"])
    >>> halting.stop(RunStop(reason="budget", message="budget $1.0000 reached"))
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from langchain_answer_metrics.judging.scope import Halt, RunScope
from langchain_answer_metrics.run.results import RunStop, SampleResults, not_run_row


class Halting:
    """The run scope's halt, watched: the breaker (in the scope's endpoints) or a limit
    (:meth:`stop`) sets it; an aborting halt cancels the samples in flight."""

    def __init__(self, scope: RunScope, *, keys: Sequence[str]) -> None:
        self.scope = scope
        self.keys = list(keys)
        self.watch = asyncio.get_running_loop().create_task(scope.halted().wait())

    @property
    def halted(self) -> bool:
        return self.scope.halt is not None

    @property
    def aborted(self) -> bool:
        """Whether the samples in flight are to be cancelled (the breaker tripped)."""
        return self.scope.halt is not None and self.scope.halt.abort

    def stop(self, stop: RunStop) -> None:
        """A limit was reached: start no more samples; those in flight finish."""
        self.scope.stop(Halt(reason=stop.reason, message=stop.message))

    def waiting(self) -> list[asyncio.Future[Any]]:
        """What to wait for besides the head sample: the halt, until it has happened once."""
        return [] if self.watch.done() else [self.watch]

    def why(self) -> RunStop:
        halt = self.scope.halt
        assert halt is not None
        return RunStop.model_validate({"reason": halt.reason, "message": halt.message})

    def not_run(self, index: int) -> SampleResults:
        """The row of the sample at ``index``, which the halt kept from running."""
        return not_run_row(index, self.keys, self.why())

    def rest(self, samples: Iterable[object], first: int) -> Iterator[SampleResults]:
        """Rows for the samples not read yet: reported, not scored."""
        for index, _ in enumerate(samples, start=first):
            yield self.not_run(index)

    def close(self) -> None:
        self.watch.cancel()
