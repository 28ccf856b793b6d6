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
import sys
import tempfile
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any, NamedTuple

from langchain_answer_metrics.cli.datasets import DatasetRow
from langchain_answer_metrics.cli.options import UsageError
from langchain_answer_metrics.core.json_text import parse_json
from langchain_answer_metrics.core.result import TokenUsage
from langchain_answer_metrics.metrics.explain import counted
from langchain_answer_metrics.run.records.format import SampleRecord, record_line
from langchain_answer_metrics.run.records.plan import ResumePlan, plan_resume
from langchain_answer_metrics.run.records.reading import as_record
from langchain_answer_metrics.run.records.saved import ForeignFileError
from langchain_answer_metrics.run.records.saved import SavedRecords as _Saved
from langchain_answer_metrics.run.records.writer import RecordsWriter, shared_writer

__all__ = ["RecordStore", "ResumePlan", "SavedRecords", "plan_resume"]

Rows = Callable[[], Iterable[DatasetRow]]


class Spent(NamedTuple):
    """What one metric spent on one sample (the ``usage`` of its result or error)."""

    usage: dict[str, TokenUsage]


class SavedRecords:
    """The records already in ``--out`` (:class:`~..run.records.saved.SavedRecords`), as
    the byte offset of each id's last line, looked up by dataset row."""

    def __init__(self, saved: _Saved) -> None:
        self.saved = saved

    @property
    def path(self) -> Path | None:
        return self.saved.path

    @property
    def offsets(self) -> dict[str, int]:
        return self.saved.offsets

    @classmethod
    def load(cls, out: Path | None, data: Path | None = None) -> SavedRecords:
        """Index ``out``, refusing a file that is not a results file (exit 2); a line cut
        short by a killed run is reported, and dropped before the run appends."""
        both = out is not None and data is not None and out.exists() and data.exists()
        if both and out.resolve() == data.resolve():  # type: ignore[union-attr]
            raise UsageError(f"--out {out} is the data file; write the results to another file")
        try:
            saved = _Saved.load(out, what="--out")
        except ForeignFileError as error:
            raise UsageError(str(error)) from None
        if saved.unreadable:
            print(f"{out}: ignored {counted(saved.unreadable, 'unreadable line')}", file=sys.stderr)
        return cls(saved)

    def __len__(self) -> int:
        return len(self.saved)

    def drop_torn_lines(self) -> None:
        """Rewrite ``--out`` without the lines cut short, and index it again. Raises
        OSError when it cannot be rewritten."""
        self.saved.drop_torn_lines()

    def records(self) -> dict[str, SampleRecord]:
        """Every saved record by id, read from the file (for runs that hold them all)."""
        return self.saved.records()

    def lookup(self, row: DatasetRow) -> SampleRecord | None:
        """The saved record of ``row``, unless the row's text changed since."""
        return self.saved.lookup(row.id, row.fingerprint, row.earlier_fingerprints)


class RecordStore:
    """Where this run's records go, and where its summary reads every record back from.

    With a regular ``--out`` file that is the file itself; otherwise (no ``--out``, or
    ``--out /dev/stdout``) a temporary file, deleted when the store is closed, holds them
    too.
    """

    def __init__(self, out: Path | None, saved: SavedRecords) -> None:
        self.out = out
        self.offsets: dict[str, int] = dict(saved.offsets)
        # The file's one writer in this process: a batch run's lines go through it too.
        self._held = contextlib.ExitStack()
        self._writer: RecordsWriter | None = None
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
        if self.out is not None and self._writer is None:
            writer = self._held.enter_context(shared_writer(self.out))
            self._start = writer.end()
            self._writer = writer

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
        if self._writer is not None:
            start = self._writer.append(line)
            if self._spool is None:
                self.offsets[record.id] = start
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
        # The writer closes the file when its last user (a batch run's lines) is done.
        self._held.close()
        self._writer = None

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
