"""The lock a run holds on its ``--out`` file while it writes it (see
:mod:`langchain_answer_metrics.checkpoints.locks`), with the CLI's one-line refusal.

    >>> with out_locked(Path("results.jsonl")):  # exit 2 if another run writes it
    ...     run(...)
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from langchain_answer_metrics.checkpoints.locks import OutputBusyError, output_lock
from langchain_answer_metrics.cli.options import UsageError


@contextlib.contextmanager
def out_locked(out: Path | None) -> Iterator[None]:
    """Hold the lock on ``--out`` while the run writes it: a second run on the same file
    refuses at once (exit 2), naming the process that writes it. None (no ``--out``, or an
    estimate, which writes nothing): no lock."""
    with contextlib.ExitStack() as stack:
        if out is not None:
            try:
                stack.enter_context(output_lock(out))
            except OutputBusyError as busy:
                holder = f"process {busy.pid}" if busy.pid is not None else "another process"
                raise UsageError(
                    f"--out {out}: another answer-metrics run is writing it ({holder}); "
                    "wait for it to end, or choose another --out"
                ) from None
            except OSError as error:
                raise UsageError(f"--out {out}: cannot lock it ({error.strerror})") from None
        yield
