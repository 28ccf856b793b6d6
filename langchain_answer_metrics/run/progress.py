"""A run's progress: counts of rows given back, reported to ``on_progress``.

>>> report = ProgressReport(on_progress=print, total=10, requests=lambda: (0, 0))
>>> report.row(errors=False)  # a row was given back: reported at once
"""

from __future__ import annotations

import time
from collections.abc import Callable

from langchain_answer_metrics.run.results import PROGRESS_EVERY, Progress, ProgressCallback


class ProgressReport:
    """Counts rows done, with errors and not run; reports each row, and every
    ``PROGRESS_EVERY`` seconds while none finishes (requests move meanwhile).

    ``requests`` gives the requests (returned, in flight) of the run so far.
    """

    def __init__(
        self,
        *,
        on_progress: ProgressCallback | None,
        total: int | None,
        requests: Callable[[], tuple[int, int]],
    ) -> None:
        self.on_progress = on_progress
        self.total = total
        self.requests = requests
        self.done = self.errors = self.not_run = 0
        self.started = self.reported = time.monotonic()

    @property
    def given_back(self) -> int:
        """Rows given back so far, run or not."""
        return self.done + self.not_run

    @property
    def timeout(self) -> float | None:
        """How long to wait for a row before reporting anyway."""
        return PROGRESS_EVERY if self.on_progress else None

    def state(self) -> Progress:
        returned, in_flight = self.requests()
        return Progress(
            done=self.done,
            errors=self.errors,
            total=self.total,
            elapsed=time.monotonic() - self.started,
            requests_done=returned,
            requests_in_flight=in_flight,
            not_run=self.not_run,
        )

    def report(self) -> None:
        if self.on_progress is not None:
            self.reported = time.monotonic()
            self.on_progress(self.state())

    def row(self, *, errors: bool) -> None:
        """A scored row is given back."""
        self.done += 1
        self.errors += errors
        self.report()

    def skipped(self) -> None:
        """A row not run is given back (reported with the next report)."""
        self.not_run += 1

    def quiet(self) -> None:
        """No row came within :attr:`timeout`: report if it has been that long."""
        if self.on_progress is not None and time.monotonic() - self.reported >= PROGRESS_EVERY:
            self.report()
