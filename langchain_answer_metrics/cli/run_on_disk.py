"""An ``--out`` file's records by id, each read from the file when it is looked up: what
``compare`` reads two runs through, whatever their length.

    >>> with run_on_disk(Path("baseline.jsonl")) as run:
    ...     run["q1"]["metrics"]["faithfulness"]["score"]   # the last line of q1, read now

The file is read once to find where each id's last line starts (the last line of an id
wins, as for a resume); what is kept is that offset per id, never a record.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from langchain_answer_metrics.cli.options import UsageError
from langchain_answer_metrics.metrics.explain import counted
from langchain_answer_metrics.run.records.reading import record_lines, record_on_line

__all__ = ["RunOnDisk", "run_on_disk"]


class RunOnDisk(Mapping[str, dict[str, Any]]):
    """A run's records by id, in the order their ids first appear in the file; a record
    is read (as a dict, as :func:`~..analysis.comparison.compare` takes it) at each lookup.

    Example:
        >>> run = RunOnDisk(path, {"q1": 0}, handle)
        >>> run["q1"]["response"]
    """

    def __init__(self, path: Path, offsets: dict[str, int], handle: IO[bytes]) -> None:
        self.path = path
        self._offsets = offsets
        self._handle = handle

    def __getitem__(self, row_id: str) -> dict[str, Any]:
        self._handle.seek(self._offsets[row_id])
        record = record_on_line(self._handle.readline())
        if record is None or record.id != row_id:
            raise UsageError(f"{self.path}: changed while it was read; run the command again")
        return record.model_dump()

    def __iter__(self) -> Iterator[str]:
        return iter(self._offsets)

    def __len__(self) -> int:
        return len(self._offsets)

    def __contains__(self, row_id: object) -> bool:
        return row_id in self._offsets  # no read


@contextlib.contextmanager
def run_on_disk(path: Path) -> Iterator[RunOnDisk]:
    """The records of ``path``, an ``--out`` file, for the block (the file is open in it).

    Raises:
        UsageError: no such file, or it holds no record; the unreadable lines of a file
            that has records are counted on stderr.
    """
    if not path.is_file():
        raise UsageError(f"{path}: no such file; pass two --out files of answer-metrics")
    offsets: dict[str, int] = {}
    unreadable = 0
    for offset, record in record_lines(path):
        if record is None:
            unreadable += 1
        else:
            offsets[record.id] = offset
    if not offsets:
        raise UsageError(f"{path}: holds no answer-metrics results ({unreadable} other lines)")
    if unreadable:
        print(f"{path}: ignored {counted(unreadable, 'unreadable line')}", file=sys.stderr)
    with path.open("rb") as handle:
        yield RunOnDisk(path, offsets, handle)
