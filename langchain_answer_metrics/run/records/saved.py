"""The records a file already holds, found again by byte offset: what a resume reads.

    >>> saved = SavedRecords.load(Path("results.jsonl"), what="--out")
    >>> saved.lookup("q1", fingerprint)   # the record of sample q1, unless its text changed

A run of any length holds an offset per sample id, never the records themselves, so its
memory stays flat however many samples the file has. A line is read again only when it
is needed. A file holding a line that is not ours (a dataset passed by mistake, a line of
text) is refused before anything is written or dropped (:class:`ForeignFileError`); a
line of ours cut short by a kill is counted (``unreadable``) and dropped when the run
appends (:meth:`SavedRecords.drop_torn_lines`); a batch's line is ours, and not a record.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from langchain_answer_metrics.checkpoints import (
    drop_torn_lines,
    iter_raw_lines,
    line_owner,
)
from langchain_answer_metrics.metrics.explain import counted
from langchain_answer_metrics.run.records.format import SampleRecord, is_batch_line
from langchain_answer_metrics.run.records.identity import own_record
from langchain_answer_metrics.run.records.reading import (
    RECORD_STARTS,
    as_record,
    is_record_value,
    record_lines,
    record_on_line,
)

__all__ = ["ForeignFileError", "SavedRecords", "read_record_at"]


class ForeignFileError(ValueError):
    """The file holds lines that are not a run's records: it is left as it is."""


def _refusal(what: str, path: Path, foreign: int, first: int, *, any_record: bool) -> str:
    if what == "--out":
        if not any_record:
            return (
                f"--out {path}: holds no answer-metrics results "
                f"({counted(foreign, 'other line')}); it is left as it is: choose a new "
                "file, or delete it to start over"
            )
        return (
            f"--out {path}: line {first} is not an answer-metrics result "
            f"({counted(foreign, 'such line')}); it is left as it is: choose a new file, or "
            "remove those lines"
        )
    return (
        f"{what} {path}: line {first} is not a checkpoint line "
        f"({counted(foreign, 'such line')}); this file is not a checkpoint, and it is left "
        "as it is: pass another path"
    )


class SavedRecords:
    """The records already in a file, as the byte offset of each id's last line."""

    def __init__(
        self, path: Path | None, offsets: dict[str, int] | None = None, unreadable: int = 0
    ) -> None:
        self.path = path
        self.offsets = offsets or {}
        self.unreadable = unreadable

    @classmethod
    def load(cls, path: Path | None, *, what: str = "--out") -> SavedRecords:
        """Index ``path`` (``what`` names it in an error: ``--out``, ``checkpoint``).

        Raises:
            ForeignFileError: a line of the file is not ours (nothing is written).
        """
        if path is None or (path.exists() and not path.is_file()):
            return cls(None)  # a device or a pipe (--out /dev/stdout) holds nothing to resume
        offsets: dict[str, int] = {}
        unreadable = foreign = first_foreign = 0
        for number, (offset, raw, value) in enumerate(iter_raw_lines(path), start=1):
            owner = line_owner(raw, value, starts=RECORD_STARTS, is_ours=is_record_value)
            if owner == "ours" and is_batch_line(value):
                continue
            record = as_record(value) if owner == "ours" else None
            if record is not None:
                offsets[record.id] = offset
            elif owner == "foreign":
                foreign += 1
                first_foreign = first_foreign or number
            else:  # cut short by a kill, or of a newer version
                unreadable += 1
        if foreign:
            any_record = bool(offsets) or unreadable > 0
            raise ForeignFileError(
                _refusal(what, path, foreign, first_foreign, any_record=any_record)
            )
        return cls(path, offsets, unreadable)

    def __len__(self) -> int:
        return len(self.offsets)

    def drop_torn_lines(self) -> None:
        """Rewrite the file without the lines cut short, and index it again (the offsets
        of the lines after one move). Raises OSError when it cannot be rewritten."""
        if self.path is not None and drop_torn_lines(self.path, ours=RECORD_STARTS):
            self.offsets = {
                record.id: offset
                for offset, record in record_lines(self.path)
                if record is not None
            }

    def records(self) -> dict[str, SampleRecord]:
        """Every saved record by id, read from the file (for runs that hold them all)."""
        if self.path is None:
            return {}
        found = {key: read_record_at(self.path, offset) for key, offset in self.offsets.items()}
        return {key: record for key, record in found.items() if record is not None}

    def lookup(
        self,
        sample_id: str,
        fingerprint: str,
        earlier: Callable[[], Iterable[str]] = tuple,
    ) -> SampleRecord | None:
        """The saved record of sample ``sample_id``, unless its text changed since (its
        fingerprint is ``fingerprint``, or one an earlier version gave the same text:
        ``earlier()``; see :func:`~.identity.own_record`)."""
        offset = self.offsets.get(sample_id)
        if offset is None or self.path is None:
            return None
        return own_record(read_record_at(self.path, offset), sample_id, fingerprint, earlier)


def read_record_at(path: Path, offset: int) -> SampleRecord | None:
    """The record on the line at byte ``offset`` of ``path`` (None: not a record)."""
    with path.open("rb") as handle:
        handle.seek(offset)
        return record_on_line(handle.readline())
