"""One writer per records file in a process: the run's records and its batches' lines go
through the same open file, one line at a time.

    >>> with shared_writer(Path("results.jsonl")) as writer:
    ...     start = writer.append(line)   # flushed and fsynced; where the line begins

A batch run appends a batch's line (from the rounds' task) while its records are appended
(by the runner, or by the CLI's thread): both go through the writer of that path, under
one lock, so each line is whole and each offset returned is the line's own. Between
processes, the lock beside the file (:mod:`~..checkpoints.locks`) keeps one run per file.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from langchain_answer_metrics.checkpoints import append_line, link_target, open_for_append
from langchain_answer_metrics.run.records.reading import RECORD_STARTS

__all__ = ["RecordsWriter", "shared_writer"]


class RecordsWriter:
    """Appends lines to one records file, opened on the first line (a line of ours cut
    short by a kill is dropped first: :func:`~..checkpoints.open_for_append`)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: IO[str] | None = None
        self._lock = threading.Lock()
        self.users = 0

    def open(self) -> None:
        """Open the file for appending now (raises OSError)."""
        with self._lock:
            self._open()

    def _open(self) -> IO[str]:
        if self._file is None:
            self._file = open_for_append(self.path, ours=RECORD_STARTS)
            self._file.flush()
        return self._file

    def append(self, line: str) -> int:
        """Append ``line``, flushed and fsynced; returns the byte offset it begins at
        (raises OSError: a full disk, a file-size limit)."""
        with self._lock:
            file = self._open()
            start = os.fstat(file.fileno()).st_size
            append_line(file, line)
            return start

    def end(self) -> int:
        """The file's size: where the next line will begin."""
        with self._lock:
            return os.fstat(self._open().fileno()).st_size

    def close(self) -> None:
        # After a failed write the buffer still holds the line, and closing retries it:
        # the failure has been reported already.
        with self._lock:
            if self._file is not None:
                with contextlib.suppress(OSError):
                    self._file.close()
                self._file = None


_WRITERS: dict[Path, RecordsWriter] = {}
_REGISTRY = threading.Lock()


@contextlib.contextmanager
def shared_writer(path: str | os.PathLike[str]) -> Iterator[RecordsWriter]:
    """The writer of ``path`` in this process for the block (the same object for every
    caller on the same file, links followed), closed when its last user leaves."""
    target = link_target(Path(path))
    key = target.resolve() if target.parent.exists() else target.absolute()
    with _REGISTRY:
        writer = _WRITERS.get(key)
        if writer is None:
            writer = _WRITERS[key] = RecordsWriter(Path(path))
        writer.users += 1
    try:
        yield writer
    finally:
        with _REGISTRY:
            writer.users -= 1
            if writer.users == 0:
                del _WRITERS[key]
                writer.close()
