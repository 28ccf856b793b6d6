"""The records of a run kept on disk, not in memory: what ``--out`` already holds (for a
resume) and what this run adds, found again by byte offset.

A run of any length holds an offset per sample id and a small number per row, never the
records themselves, so its memory stays flat however many rows the dataset has:

    >>> saved = SavedRecords.load(Path("results.jsonl"), data=Path("qa.jsonl"))
    >>> plan = plan_resume(lambda: iter_rows("qa.jsonl"), saved.lookup, signatures)
    >>> store = RecordStore(Path("results.jsonl"), saved)
    >>> records = store.in_order(lambda: iter_rows("qa.jsonl"))
    >>> for record in records(): ...

A line is read again from the file only when it is needed: to merge a resumed row's
earlier metrics into its new line, and to summarise, print and report the run.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any, NamedTuple

from langchain_answer_metrics.checkpoints import (
    append_line,
    drop_torn_lines,
    is_unreadable,
    iter_lines,
    iter_raw_lines,
    line_owner,
    open_for_append,
)
from langchain_answer_metrics.cli.datasets import DatasetRow
from langchain_answer_metrics.cli.options import UsageError
from langchain_answer_metrics.cli.records import (
    RECORD_STARTS,
    SampleRecord,
    as_record,
    is_record_value,
    record_line,
)
from langchain_answer_metrics.core.json_text import parse_json
from langchain_answer_metrics.core.result import TokenUsage
from langchain_answer_metrics.metrics.explain import counted

__all__ = ["RecordStore", "ResumePlan", "SavedRecords", "plan_resume"]

Rows = Callable[[], Iterable[DatasetRow]]


class Spent(NamedTuple):
    """What one metric spent on one sample (the ``usage`` of its result or error)."""

    usage: dict[str, TokenUsage]


def _refuse_foreign(out: Path, foreign: int, first: int, *, any_record: bool) -> None:
    """Refuse an ``--out`` file holding lines that are not ours, whatever its size: a
    line of text, a dataset, a blob. Nothing of it is written or dropped."""
    if not foreign:
        return
    if not any_record:
        raise UsageError(
            f"--out {out}: holds no answer-metrics results ({counted(foreign, 'other line')}); "
            "it is left as it is: choose a new file, or delete it to start over"
        )
    raise UsageError(
        f"--out {out}: line {first} is not an answer-metrics result "
        f"({counted(foreign, 'such line')}); it is left as it is: choose a new file, or "
        "remove those lines"
    )


class SavedRecords:
    """The records already in ``--out``, as the byte offset of each id's last line."""

    def __init__(self, path: Path | None, offsets: dict[str, int] | None = None) -> None:
        self.path = path
        self.offsets = offsets or {}

    @classmethod
    def load(cls, out: Path | None, data: Path) -> SavedRecords:
        """Index ``out``, refusing a file that is not a results file; a line cut short
        by a killed run is reported, and dropped from the file (atomically)."""
        if out is None or (out.exists() and not out.is_file()):
            return cls(None)  # a device or a pipe (--out /dev/stdout) holds nothing to resume
        if out.exists() and data.exists() and out.resolve() == data.resolve():
            raise UsageError(f"--out {out} is the data file; write the results to another file")
        offsets: dict[str, int] = {}
        unreadable = foreign = first_foreign = 0
        for number, (offset, raw, value) in enumerate(iter_raw_lines(out), start=1):
            owner = line_owner(raw, value, starts=RECORD_STARTS, is_ours=is_record_value)
            record = as_record(value) if owner == "ours" else None
            if record is not None:
                offsets[record.id] = offset
            elif owner == "foreign":
                foreign += 1
                first_foreign = first_foreign or number
            else:  # cut short by a kill, or of a newer version
                unreadable += 1
        _refuse_foreign(out, foreign, first_foreign, any_record=bool(offsets) or unreadable > 0)
        if unreadable:
            print(f"{out}: ignored {counted(unreadable, 'unreadable line')}", file=sys.stderr)
        return cls(out, offsets)

    def __len__(self) -> int:
        return len(self.offsets)

    def drop_torn_lines(self) -> None:
        """Rewrite ``--out`` without the lines cut short, and index it again (the offsets
        of the lines after one move). Raises OSError when it cannot be rewritten."""
        if self.path is not None and drop_torn_lines(self.path, ours=RECORD_STARTS):
            self.offsets = {}
            for offset, value in iter_lines(self.path):
                record = None if is_unreadable(value) else as_record(value)
                if record is not None:
                    self.offsets[record.id] = offset

    def records(self) -> dict[str, SampleRecord]:
        """Every saved record by id, read from the file (for runs that hold them all)."""
        if self.path is None:
            return {}
        found = {key: read_record_at(self.path, offset) for key, offset in self.offsets.items()}
        return {key: record for key, record in found.items() if record is not None}

    def lookup(self, row: DatasetRow) -> SampleRecord | None:
        """The saved record of ``row``, unless the row's text changed since."""
        offset = self.offsets.get(row.id)
        if offset is None or self.path is None:
            return None
        record = read_record_at(self.path, offset)
        return record if record is not None and record.fingerprint == row.fingerprint else None


def read_record_at(path: Path, offset: int) -> SampleRecord | None:
    with path.open("rb") as handle:
        handle.seek(offset)
        raw = handle.readline()
    try:
        return as_record(parse_json(raw.decode("utf-8")))
    except (UnicodeDecodeError, ValueError):
        return None


class ResumePlan:
    """Which metrics each row still lacks: a group (``missing`` metric keys) per row,
    numbered, so a row costs a few bytes however long its text."""

    NOTHING = -1

    def __init__(self) -> None:
        self.groups: dict[tuple[str, ...], int] = {}  # in order of first appearance
        self.sizes: list[int] = []
        self.of_row = array("i")  # the group of each row, in file order
        self.rows = 0

    @property
    def pending(self) -> int:
        return sum(self.sizes)

    def rows_of(self, rows: Rows, missing: tuple[str, ...]) -> Iterator[DatasetRow]:
        """The rows of group ``missing``, read again from ``rows``."""
        number = self.groups[missing]
        return (row for row, group in zip(rows(), self.of_row) if group == number)


def plan_resume(
    rows: Rows,
    saved: Callable[[DatasetRow], SampleRecord | None],
    signatures: Mapping[str, str],
    *,
    keep_degraded: bool = False,
) -> ResumePlan:
    """Read ``rows`` once and group them by the metrics each one lacks (see
    :func:`langchain_answer_metrics.cli.run._plan_resume`)."""
    plan = ResumePlan()
    for row in rows():
        known = saved(row)
        missing = tuple(
            key
            for key in signatures
            if known is None or not known.scored(key, signatures[key], keep_degraded=keep_degraded)
        )
        plan.rows += 1
        if not missing:
            plan.of_row.append(plan.NOTHING)
            continue
        number = plan.groups.setdefault(missing, len(plan.groups))
        if number == len(plan.sizes):
            plan.sizes.append(0)
        plan.sizes[number] += 1
        plan.of_row.append(number)
    return plan


class RecordStore:
    """Where this run's records go, and where its summary reads every record back from.

    With a regular ``--out`` file that is the file itself; otherwise (no ``--out``, or
    ``--out /dev/stdout``) a temporary file, deleted when the store is closed, holds them
    too.
    """

    def __init__(self, out: Path | None, saved: SavedRecords) -> None:
        self.out = out
        self.offsets: dict[str, int] = dict(saved.offsets)
        self._out_file: IO[str] | None = None
        self._spool: IO[bytes] | None = None
        # What each sample of this run spent, a line of usage per sample: the run's spend
        # is summed from it at the end, as from a list of results, without keeping them.
        self._usage = tempfile.TemporaryFile(prefix="answer-metrics-usage-")  # noqa: SIM115
        self.path = saved.path
        self._start: int | None = None  # where this run's lines begin in --out
        if self.path is None:
            self._spool = tempfile.TemporaryFile(prefix="answer-metrics-")  # noqa: SIM115

    def open(self) -> None:
        """Open ``--out`` for appending (raises OSError)."""
        if self.out is not None and self._out_file is None:
            self._out_file = open_for_append(self.out, ours=RECORD_STARTS)
            self._out_file.flush()
            self._start = os.fstat(self._out_file.fileno()).st_size

    def appended(self) -> int:
        """How many records this run has appended to ``--out``, counted in the file (what
        a kill or Ctrl-C leaves is what is there, whatever the run thought it wrote)."""
        if self.path is None or self._start is None or self._spool is not None:
            return 0
        appended = 0
        with self.path.open("rb") as handle:
            handle.seek(self._start)
            for raw in handle:
                with contextlib.suppress(UnicodeDecodeError, ValueError):
                    appended += as_record(json.loads(raw.decode("utf-8"))) is not None
        return appended

    def append(self, record: SampleRecord) -> None:
        """Write ``record``'s line (to ``--out``, flushed and fsynced; raises OSError)."""
        line = record_line(record)
        if self._out_file is not None:
            append_line(self._out_file, line)  # flushed: the file's size ends with it
            if self._spool is None:
                end = os.fstat(self._out_file.fileno()).st_size
                self.offsets[record.id] = end - len(line.encode("utf-8"))
        if self._spool is not None:
            with _temporary_file_errors():
                self.offsets[record.id] = self._spool.seek(0, 2)
                self._spool.write(line.encode("utf-8"))
                self._spool.flush()

    def add_spent(self, results: Mapping[str, Any]) -> None:
        """Keep what ``results`` (one sample's, by metric key) spent, for :meth:`spent`."""
        usage = {
            key: {label: used.model_dump() for label, used in (outcome.usage or {}).items()}
            for key, outcome in results.items()
        }
        with _temporary_file_errors():
            self._usage.write(json.dumps(usage).encode("utf-8") + b"\n")

    def spent(self) -> Iterator[dict[str, Spent]]:
        """Each sample's :meth:`add_spent`, in order: ``{key: outcome with .usage}``."""
        self._usage.flush()
        self._usage.seek(0)
        for line in self._usage:
            yield {
                key: Spent({label: TokenUsage(**used) for label, used in usage.items()})
                for key, usage in json.loads(line).items()
            }
        self._usage.seek(0, 2)

    def in_order(self, rows: Rows) -> Callable[[], Iterator[SampleRecord]]:
        """A function reading back the last record of each of ``rows`` that has one, in
        the rows' order, each time it is called. The rows are read once, here: the
        function keeps 8 bytes per row (where its record starts)."""
        starts = array("q", (self.offsets.get(row.id, -1) for row in rows()))

        def records() -> Iterator[SampleRecord]:
            with contextlib.ExitStack() as stack:
                if self._spool is not None:
                    handle = self._spool  # read where it is written (passes take turns)
                else:
                    assert self.path is not None
                    handle = stack.enter_context(self.path.open("rb"))
                for offset in starts:
                    if offset < 0:
                        continue
                    handle.seek(offset)
                    record = as_record(parse_json(handle.readline().decode("utf-8")))
                    if record is not None:
                        yield record

        return records

    def close_out(self) -> None:
        # After a failed write the buffer still holds the line, and closing retries it:
        # the failure has been reported already.
        if self._out_file is not None:
            with contextlib.suppress(OSError):
                self._out_file.close()
            self._out_file = None

    def close(self) -> None:
        self.close_out()
        # A write that failed (a full disk) is retried on close, and fails again: it has
        # been reported already, and the temporary files are deleted all the same.
        for temporary in (self._usage, self._spool):
            if temporary is not None:
                with contextlib.suppress(OSError):
                    temporary.close()
        self._spool = None


@contextlib.contextmanager
def _temporary_file_errors() -> Iterator[None]:
    """A full disk under the run's own temporary files: the user's to fix, not a crash."""
    try:
        yield
    except OSError as error:
        raise UsageError(
            f"cannot write a temporary file in {tempfile.gettempdir()} "
            f"({error.strerror or error}); free some space there or set TMPDIR"
        ) from None
