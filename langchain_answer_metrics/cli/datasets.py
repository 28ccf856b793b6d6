"""Read a dataset file (JSONL, JSON, CSV or Parquet) into samples, with column mapping.

    >>> rows = load_rows("qa.csv", ColumnMapping(response="answer", reference="gold"))
    >>> rows[0].id, rows[0].sample.response

Each row's fields are found by :meth:`SampleMapping.for_rows` (the same rules as the
LangSmith adapter: ``question``/``answer``/``ground_truth`` ... are recognised by
default), so a column name given here overrides one field, and each value is read as the
runner reads a DataFrame's or a list of dicts' (:mod:`langchain_answer_metrics.mapping.cells`):
a contexts text holding a JSON list (``["first", "second"]``, as a CSV cell holds it) is
that list; any other text is one context, even one that starts with ``[`` (a citation
marker: ``[1] Paris is the capital.``). A value that cannot be read so (a number as the
contexts, a JSON list holding something other than strings) is that row's error,
reported by each metric that reads it. JSON nested more than
:data:`~langchain_answer_metrics.core.json_text.MAX_JSON_DEPTH` levels deep is the file's
error, naming the line.

Problems with the file raise :class:`DatasetError`, whose message is one line that names
the file, the line and what to fix. A caller whose users set the format, the id column or
a field's column with options of its own (a command's ``--format``, ``--response-col``)
passes their names as ``flags``, and the messages name them; otherwise they name the
keywords (``format=``, ``ColumnMapping(response=...)``).
"""

from __future__ import annotations

import csv
import functools
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from langchain_answer_metrics.cli.formats import FORMATS as FORMATS
from langchain_answer_metrics.cli.formats import Format
from langchain_answer_metrics.core.json_text import JSONTooDeepError, parse_json
from langchain_answer_metrics.core.sample import (
    SAMPLE_FIELDS,
    InvalidSampleError,
    RowFields,
    Sample,
    SampleField,
    SampleLike,
)
from langchain_answer_metrics.mapping import ROW_RULES, AmbiguousFieldError, SampleMapping
from langchain_answer_metrics.run.records import identity
from langchain_answer_metrics.run.records.identity import earlier_fingerprints, sample_fingerprint

_SUFFIXES: dict[str, Format] = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".csv": "csv",
    ".parquet": "parquet",
}


class DatasetError(ValueError):
    """The dataset cannot be used; the message is one line saying where and what to fix."""


@dataclass(frozen=True)
class ColumnMapping:
    """Which column holds each sample field; ``None`` keeps the default names."""

    user_input: str | None = None
    response: str | None = None
    reference: str | None = None
    retrieved_contexts: str | None = None
    id: str = "id"

    def overrides(self) -> dict[str, str]:
        return {
            name: column for name in SAMPLE_FIELDS if (column := getattr(self, name)) is not None
        }


@dataclass(frozen=True)
class DatasetRow:
    """One sample of the file, with its id and where it came from (``line 3``)."""

    id: str
    sample: Sample
    location: str
    columns: tuple[str, ...] = field(default=(), compare=False)
    # Fields found but not readable as such (a JSON list holding a number), left out of sample.
    unreadable: Mapping[str, Any] | None = field(default=None, compare=False)
    agent: Mapping[str, Any] | None = field(default=None, compare=False)  # messages..., as found

    @property
    def input(self) -> SampleLike:
        """What the metrics score: ``sample``, or, with an unreadable field or an agent's
        (read by the agent metrics), the values as found, each metric reading its own."""
        if not self.unreadable and not self.agent:
            return self.sample
        fields = {name: value for name, value in self.sample if value is not None}
        return RowFields({**fields, **(self.unreadable or {}), **(self.agent or {})})

    @property
    def fingerprint(self) -> str:
        """A hash of the row's text as the metrics read it (:attr:`input`), the runner's
        for the same row (:mod:`~langchain_answer_metrics.run.records.identity`): a
        resumed run re-scores a row whose text changed."""
        return sample_fingerprint(self.input)

    def earlier_fingerprints(self) -> tuple[str, ...]:
        """The fingerprints an earlier version wrote for this row's text (every sample
        field named, the missing ones null)."""
        return earlier_fingerprints({**dict(self.sample), **(self.agent or {})})


def demo_path() -> Path:
    """The bundled demo dataset: 12 samples in English, Russian and Chinese (JSONL)."""
    return Path(str(resources.files("langchain_answer_metrics") / "data" / "demo.jsonl"))


def detect_format(path: Path, flags: Mapping[str, str] | None = None) -> Format:
    """The format named by the file's suffix."""
    try:
        return _SUFFIXES[path.suffix.lower()]
    except KeyError:
        raise DatasetError(
            f"{path}: cannot tell the format from the suffix {path.suffix or '(none)'!r}; "
            "use .jsonl, .json, .csv or .parquet, or pass "
            f"{_setting(flags, 'format', 'jsonl|json|csv|parquet')}"
        ) from None


def _setting(flags: Mapping[str, str] | None, name: str, value: str) -> str:
    """How the user sets ``name`` to ``value``: ``--format jsonl``, else ``format=jsonl``."""
    flag = (flags or {}).get(name)
    if flag is not None:
        return f"{flag} {value}"
    return f"{name}={value}" if name == "format" else f"ColumnMapping({name}={value})"


def _option(flags: Mapping[str, str] | None, name: str) -> str:
    """What sets ``name``: ``--response-col``, else ``ColumnMapping(response=...)``."""
    return (flags or {}).get(name) or f"ColumnMapping({name}=...)"


def load_rows(
    path: str | Path,
    mapping: ColumnMapping | None = None,
    *,
    format: Format | None = None,
    required: Sequence[SampleField] = (),
    flags: Mapping[str, str] | None = None,
) -> list[DatasetRow]:
    """Every row of ``path`` as a :class:`DatasetRow`, in file order.

    ``required`` are the fields the chosen metrics need: a file where no row has one of
    them is refused up front, naming what maps it. A single row missing a field is kept;
    the metric reports it as that sample's error. ``flags`` names the caller's options
    for ``format``, ``id`` and each field's column, for the error messages.
    """
    return list(iter_rows(path, mapping, format=format, required=required, flags=flags))


def iter_rows(
    path: str | Path,
    mapping: ColumnMapping | None = None,
    *,
    format: Format | None = None,
    required: Sequence[SampleField] = (),
    flags: Mapping[str, str] | None = None,
) -> Iterator[DatasetRow]:
    """The rows of :func:`load_rows`, read lazily: a JSONL or CSV file is read a line at
    a time, so memory stays flat however long the file.

    The checks over the whole file (unique ids, mapped columns and required fields that
    some row has) raise :class:`DatasetError` when the iteration ends: a caller that must
    refuse a bad file before doing anything reads it through once first.

        >>> count = sum(1 for _ in iter_rows("qa.jsonl"))
    """
    file = Path(path)
    mapping = mapping or ColumnMapping()
    kind = format or detect_format(file, flags)
    lines: Iterable[str] = () if kind == "parquet" else _read_lines(file)  # pyarrow reads it
    readers: dict[Format, Callable[[Iterable[str], Path], Iterator[tuple[str, Record]]]] = {
        "jsonl": _jsonl_records,
        "json": functools.partial(_json_records, as_jsonl=_setting(flags, "format", "jsonl")),
        "csv": _csv_records,
        "parquet": _parquet_records,
    }
    records = readers[kind]
    resolver = SampleMapping.for_rows(**mapping.overrides())
    count = 0
    seen_ids: dict[str, str] = {}
    columns: dict[str, None] = {}
    present: set[str] = set()
    for location, record in records(lines, file):
        sample, unreadable = _sample_of(resolver, record, f"{file} {location}", flags)
        row_id = identity.row_id(record, number=count + 1, key=mapping.id)
        if row_id in seen_ids:
            raise DatasetError(
                f"{file} {location}: id {row_id!r} was already used on {seen_ids[row_id]}; "
                f"ids must be unique (fix the id column, or pass {_setting(flags, 'id', 'NAME')})"
            )
        seen_ids[row_id] = location
        count += 1
        keys = tuple(str(key) for key in record)
        row = DatasetRow(row_id, sample, location, keys, unreadable, resolver.agent_fields(record))
        columns.update(dict.fromkeys(row.columns))
        present.update(name for name in SAMPLE_FIELDS if getattr(sample, name) is not None)
        present.update(unreadable or ())
        yield row
    if not count:
        raise DatasetError(f"{file}: no samples found; the file has no data rows")
    _check_mapping(list(columns), present, mapping, required, file, flags)


# --------------------------------------------------------------------------- formats


def _read_lines(file: Path) -> Iterator[str]:
    """The file's lines (each with its end), decoded one at a time."""
    try:
        handle = file.open("rb")
    except FileNotFoundError:
        raise DatasetError(f"{file}: no such file; check the path") from None
    except IsADirectoryError:
        raise DatasetError(f"{file}: is a directory; pass a .jsonl, .json or .csv file") from None
    except OSError as error:
        raise DatasetError(f"{file}: cannot read it ({error.strerror}); check the path") from None
    offset = 0
    with handle:
        for raw in handle:
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise DatasetError(
                    f"{file}: not UTF-8 text (byte {raw[error.start]:#04x} at offset "
                    f"{offset + error.start}); save the file as UTF-8"
                ) from None
            # A byte-order mark: spreadsheet exports often start with one.
            yield line.removeprefix("\ufeff") if not offset else line
            offset += len(raw)


Record = Mapping[str, Any]
Flags = Mapping[str, str] | None


def _jsonl_records(lines: Iterable[str], file: Path) -> Iterator[tuple[str, Record]]:
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = parse_json(line)
        except json.JSONDecodeError as error:
            raise DatasetError(
                f"{file} line {number}: invalid JSON ({error.msg} at column {error.colno}); "
                "fix or remove that line (each line must be one JSON object)"
            ) from None
        except JSONTooDeepError as error:
            raise DatasetError(f"{file} line {number}: {error}; fix or remove that line") from None
        yield f"line {number}", _as_record(value, file, f"line {number}")


def _json_records(
    lines: Iterable[str], file: Path, *, as_jsonl: str
) -> Iterator[tuple[str, Record]]:
    try:
        value = parse_json("".join(lines))  # one JSON list: read whole
    except JSONTooDeepError as error:
        raise DatasetError(f"{file}: {error}; fix the JSON (a list of objects)") from None
    except json.JSONDecodeError as error:
        hint = (
            f"it looks like JSON Lines: rename it to .jsonl or pass {as_jsonl}"
            if error.msg == "Extra data"
            else "fix the JSON (a list of objects)"
        )
        raise DatasetError(
            f"{file} line {error.lineno}: invalid JSON ({error.msg} at column {error.colno}); "
            f"{hint}"
        ) from None
    if not isinstance(value, list):
        raise DatasetError(
            f"{file}: expected a JSON list of objects, got {_json_type(value)}; "
            "write the samples as [{...}, {...}]"
        )
    for number, item in enumerate(value, start=1):
        yield f"item {number}", _as_record(item, file, f"item {number}")


def _parquet_records(lines: Iterable[str], file: Path) -> Iterator[tuple[str, Record]]:
    """The rows of a Parquet file (pyarrow, imported only here); a null cell is a
    missing value, a list column gives lists."""
    from langchain_answer_metrics.run.tables import read_parquet

    if not file.is_file():
        raise DatasetError(f"{file}: no such file; check the path")
    try:
        records = read_parquet(file)
    except ImportError as error:
        raise DatasetError(f"{file}: {error}") from None
    except Exception as error:  # pyarrow's ArrowInvalid, OSError...
        raise DatasetError(
            f"{file}: not a readable Parquet file ({type(error).__name__}: {error})"
        ) from None
    for number, record in enumerate(records, start=1):
        yield f"row {number}", {key: value for key, value in record.items() if value is not None}


# DictReader's key for cells beyond the header; no real column can be named this.
_EXTRA_CELLS = "\0extra"


def _csv_records(lines: Iterable[str], file: Path) -> Iterator[tuple[str, Record]]:
    reader = csv.DictReader(lines, restkey=_EXTRA_CELLS)
    if not reader.fieldnames:
        return
    try:
        for record in reader:
            location = f"line {reader.line_num}"
            if _EXTRA_CELLS in record:
                cells = len(reader.fieldnames) + len(record[_EXTRA_CELLS])
                raise DatasetError(
                    f"{file} {location}: {cells} cells but the header has "
                    f"{len(reader.fieldnames)}; quote cells that "
                    'contain commas ("a, b")'
                )
            # An empty cell is a missing value, not an empty text.
            yield location, {key: value for key, value in record.items() if value not in ("", None)}
    except csv.Error as error:
        raise DatasetError(
            f"{file} line {reader.line_num}: bad CSV ({error}); fix the quoting"
        ) from None


def _as_record(value: Any, file: Path, location: str) -> Record:
    if not isinstance(value, dict):
        raise DatasetError(
            f"{file} {location}: expected a JSON object with fields such as "
            f'"response", got {_json_type(value)}'
        )
    return value


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    return names.get(type(value), "null" if value is None else "a number")


def _sample_of(
    resolver: SampleMapping, record: Record, where: str, flags: Flags
) -> tuple[Sample, dict[str, Any] | None]:
    """One row's sample, read as the runner reads rows (:meth:`SampleMapping.read_row`),
    and the fields that could not be read (see :attr:`DatasetRow.unreadable`)."""
    try:
        sample, unreadable = resolver.read_row(record, metric=where)
    except AmbiguousFieldError as error:
        columns = " and ".join(repr(key) for key in error.keys)
        raise DatasetError(
            f"{where}: the columns {columns} both hold the {error.field}, with different "
            f"values; remove one, or pass {_setting(flags, error.field, 'NAME')}"
        ) from None
    except InvalidSampleError as error:  # a cell holding JSON nested too deeply
        raise DatasetError(f"{error}; fix or remove that row") from None
    return sample, unreadable or None


# --------------------------------------------------------------------------- checks


def _check_mapping(
    columns: Sequence[str],
    present: set[str],
    mapping: ColumnMapping,
    required: Sequence[SampleField],
    file: Path,
    flags: Mapping[str, str] | None,
) -> None:
    """Refuse a mapped column that no row has, or a required field that no row has
    (``columns``: every row's, in order of appearance; ``present``: the fields some row
    has)."""
    listing = ", ".join(columns) or "none"
    for name, column in mapping.overrides().items():
        top = column.split(".", 1)[0]
        if top not in columns:
            raise DatasetError(
                f"{file}: no column {column!r} for {_option(flags, name)} "
                f"(columns: {listing}); check the name"
            )
    for name in dict.fromkeys(required):
        if name not in present:
            looked_for = getattr(mapping, name) or " / ".join(ROW_RULES[name].keys)
            raise DatasetError(
                f"{file}: no row has a {name} field (looked for {looked_for}; columns: "
                f"{listing}); map it with {_setting(flags, name, 'NAME')}"
            )
