"""Reading a labelled data file for calibrate and align: each row by its id, and its label.

The file is read a line at a time in the formats the CLI reads (JSONL, JSON, CSV); a row
without an id is numbered from 1, as the dataset readers number it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import langchain_answer_metrics.cli.datasets as datasets
from langchain_answer_metrics.analysis.calibration import label_type, parse_label
from langchain_answer_metrics.cli.datasets import DatasetError
from langchain_answer_metrics.cli.group_options import Columns
from langchain_answer_metrics.cli.options import LOADER_FLAGS
from langchain_answer_metrics.run.records import identity


def rows_by_id(data: Path, columns: Columns) -> Iterator[tuple[str, str, datasets.Record]]:
    """Each row of ``data`` as (its id, where it is, its raw record), read a line at a
    time; a row without an id is numbered from 1, as the dataset readers number it."""
    kind = columns.format or datasets.detect_format(data, LOADER_FLAGS)
    Reader = Callable[[Iterable[str], Path], Iterator[tuple[str, datasets.Record]]]
    readers: dict[str, Reader] = {
        "jsonl": datasets._jsonl_records,
        "json": functools.partial(datasets._json_records, as_jsonl="--format jsonl"),
        "csv": datasets._csv_records,
    }
    id_column = columns.mapping().id
    records = readers[kind](datasets._read_lines(data), data)
    for number, (location, record) in enumerate(records, start=1):
        yield identity.row_id(record, number=number, key=id_column), location, record


def read_labels(data: Path, columns: Columns, label_col: str) -> dict[str, float | bool]:
    """The label in column ``label_col`` of each row id (rows without one are left out)."""
    labels: dict[str, float | bool] = {}
    number = 0
    seen: dict[str, None] = {}
    for row_id, location, record in rows_by_id(data, columns):
        number += 1
        seen.update(dict.fromkeys(map(str, record)))
        try:
            label = parse_label(record.get(label_col))
        except ValueError as error:
            raise DatasetError(f"{data} {location}: {error}; fix it or leave it empty") from None
        if label is not None:
            labels[row_id] = label
    if not labels:
        raise DatasetError(
            f"{data}: no row has a label in the column {label_col!r} ({number} rows, "
            f"0 labelled; columns: {', '.join(seen) or 'none'}); name the column with "
            "--label-col"
        )
    try:
        label_type(labels.values())
    except ValueError as error:
        raise DatasetError(f"{data}: {error}") from None
    return labels
