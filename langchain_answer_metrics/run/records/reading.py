"""Reading records back: a line's record, of this version or an earlier one, and the
records of a file.

    >>> records, unreadable = read_records(Path("results.jsonl"))
    >>> for offset, record in record_lines(Path("results.jsonl")): ...   # one at a time
    >>> as_record({"checkpoint": 1, "index": 0, ...})   # an old checkpoint's line, as a record

Lines of ``--out`` of version 1 are read through
:func:`~langchain_answer_metrics.core.compat.record_in_current_shape`, lines of the runner's
checkpoints before the one format through :mod:`.legacy`; a batch's line is passed over.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from langchain_answer_metrics.checkpoints import is_unreadable, iter_lines
from langchain_answer_metrics.core.compat import record_in_current_shape
from langchain_answer_metrics.core.json_text import parse_json
from langchain_answer_metrics.run.records.format import (
    SCHEMA_VERSION,
    SampleRecord,
    is_batch_line,
)
from langchain_answer_metrics.run.records.legacy import CHECKPOINT_START, checkpoint_record

__all__ = [
    "RECORD_STARTS",
    "as_record",
    "is_record_value",
    "read_records",
    "record_lines",
    "record_on_line",
]


def read_records(path: Path) -> tuple[dict[str, SampleRecord], int]:
    """The records of an ``--out`` file by id (the last line of an id wins), and the count
    of unreadable lines (a line cut short when a run was killed, a line of a newer version,
    or one that is not a record at all)."""
    records: dict[str, SampleRecord] = {}
    unreadable = 0
    for _, record in record_lines(path):
        if record is None:
            unreadable += 1
        else:
            records[record.id] = record
    return records, unreadable


def record_lines(path: Path) -> Iterator[tuple[int, SampleRecord | None]]:
    """Each line's byte offset and record, read a line at a time; None for a line that
    holds no record (cut short when a run was killed, even inside a multi-byte character;
    of a newer version; not a record at all). A batch's lines are passed over."""
    for offset, value in iter_lines(path):
        if is_unreadable(value):
            yield offset, None
        elif not is_batch_line(value):
            yield offset, as_record(value)


def record_on_line(raw: bytes) -> SampleRecord | None:
    """The record a line read back by its offset holds; None for a line cut short (even
    inside a multi-byte character), not JSON, or not a record."""
    try:
        return as_record(parse_json(raw.decode("utf-8")))
    except (UnicodeDecodeError, ValueError):
        return None


def as_record(value: Any) -> SampleRecord | None:
    """The record a line's JSON value holds (of any version, or a checkpoint's line of
    the format before this one), or None if it holds none (a batch's line, a newer
    version's, someone else's)."""
    try:
        if isinstance(value, dict) and "checkpoint" in value and "schema_version" not in value:
            return checkpoint_record(value)
        return SampleRecord.model_validate(record_in_current_shape(value, SCHEMA_VERSION))
    except (ValueError, ValidationError):
        return None


RECORD_STARTS = (b'{"schema_version": ', b'{"version": ', CHECKPOINT_START)
"""How a line of ours begins (``record_line``; ``version`` in the first format; an old
checkpoint's line): a line cut short by a kill that begins so is ours to drop, any other
line is not."""


def is_record_value(value: Any) -> bool:
    """Whether a line's JSON value is ours: a record (:func:`as_record`), a batch's line,
    or a line of a newer version (it has ``schema_version``), which is kept and ignored."""
    if isinstance(value, dict) and ("schema_version" in value or "checkpoint" in value):
        return True
    return as_record(value) is not None
