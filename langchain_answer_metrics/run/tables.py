"""Tables in and out: pandas DataFrames, Parquet files and Arrow rows as samples; results
as columns.

    >>> rows = evaluate(frame, metrics)            # a pandas DataFrame in
    >>> rows.to_pandas()                           # the frame's columns + per metric key
    ...                                            # <key>_score/_passed/_reason/_error/_result

Rows are mapped onto samples with :meth:`SampleMapping.for_rows` (``question``,
``answer``, ``ground_truth``, ``contexts``... are found by name; other columns are kept,
not scored). Table cells are made plain Python first: a missing value (``None``, ``NaN``,
``pd.NA``) is a missing field, and an array cell (a Parquet list column) is a list.

Per metric key the result columns are (:func:`result_columns`):

- ``<key>_score`` (float), ``<key>_passed`` (bool, null without a threshold),
  ``<key>_reason`` (text): null when the metric could not score the row;
- ``<key>_error``: null when scored, else ``"ErrorType: message"``;
- ``<key>_result``: the whole :class:`MetricResult` as JSON (null on an error).

pandas and pyarrow are optional (``pip install "langchain-answer-metrics[pandas]"``) and
imported only by the functions that need them; nothing here is loaded by
``import langchain_answer_metrics``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_answer_metrics.core.result import MetricResult
from langchain_answer_metrics.core.sample import Sample, SampleLike
from langchain_answer_metrics.mapping import ROW_RULES, FieldSpec, SampleMapping
from langchain_answer_metrics.run.records.identity import (
    ID_KEY,
    IdentifiedFields,
    number_id,
    row_id,
)

if TYPE_CHECKING:
    import pandas as pd

RESULT_SUFFIXES = ("score", "passed", "reason", "error", "result")
"""The columns each metric key adds, as ``<key>_<suffix>``."""

PANDAS_HINT = 'pip install "langchain-answer-metrics[pandas]"'


def is_dataframe(value: Any) -> bool:
    """Whether ``value`` looks like a pandas DataFrame (duck-typed: pandas is not imported)."""
    return (
        hasattr(value, "columns")
        and callable(getattr(value, "to_dict", None))
        and callable(getattr(value, "itertuples", None))
    )


def plain(value: Any) -> Any:
    """A table cell as plain Python: missing values are None, arrays are lists."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, float) and math.isnan(value):
        return None
    if type(value).__name__ in {"NAType", "NaTType"}:
        return None
    tolist = getattr(value, "tolist", None)
    if callable(tolist) and not isinstance(value, (bytes, Mapping)):
        converted = tolist()
        if isinstance(converted, list):
            return [plain(item) for item in converted]
        return plain(converted)
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value


def records_of(frame: Any) -> list[dict[str, Any]]:
    """The rows of a DataFrame as dicts of plain values."""
    return [
        {str(column): plain(cell) for column, cell in record.items()}
        for record in frame.to_dict(orient="records")
    ]


def samples_from_records(
    records: Iterable[Mapping[str, Any]], *, model: type[Sample] = Sample, **columns: FieldSpec
) -> list[Sample]:
    """One :class:`Sample` per record; ``columns`` overrides where a field is found
    (``response="answer_text"``), as in :meth:`SampleMapping.for_rows`. ``model``: what
    each record becomes (``PairSample`` for :class:`PairwisePreference`'s pairs, whose
    ``response_a`` / ``response_b`` a plain Sample has no place for)."""
    mapping = SampleMapping.for_rows(**columns)
    return [mapping.from_row(dict(record), model=model) for record in records]


def samples_from_dataframe(
    frame: Any, *, model: type[Sample] = Sample, **columns: FieldSpec
) -> list[Sample]:
    """One :class:`Sample` per row of a pandas DataFrame (see :func:`samples_from_records`)."""
    return samples_from_records(records_of(frame), model=model, **columns)


def run_inputs(
    samples: Any, required: Iterable[str] = (), *, id_key: str | None = ID_KEY
) -> Iterable[SampleLike]:
    """What the runner scores: ``samples`` (a DataFrame, or an iterable of samples and
    dicts) with every dict row's fields found by
    :data:`~langchain_answer_metrics.mapping.ROW_RULES`, the CLI's and DataFrames' one
    table (``question``, ``answer``, ``contexts``, ``ground_truth``...; other keys are
    ignored), and read as the CLI reads a dataset file's rows
    (:meth:`~langchain_answer_metrics.mapping.SampleMapping.fields_of`: a number is text,
    a text in the contexts one context, a text holding a JSON list that list, as
    ``pd.read_csv`` leaves a CSV's contexts cell). A value that cannot be read is checked
    by the metrics, as in ``invoke``, which name the field and what it holds.

    A list (or DataFrame) is mapped now: a ``required`` field (one the metrics need) that
    no row has (in a list holding dicts: a list of Samples gets each row's own error), or
    a row holding a field under two names with different values
    (:class:`~langchain_answer_metrics.mapping.AmbiguousFieldError`), raises before any
    request. Any other iterable is mapped lazily as it is read: an ambiguous row raises
    then, and a missing field is that row's error. A dict row's ``id_key`` value is kept
    as its id for the checkpoint (:mod:`~langchain_answer_metrics.run.records.identity`).

        >>> run_inputs([{"question": "Q?", "answer": "A.", "ground_truth": "A."}])
        [{'user_input': 'Q?', 'response': 'A.', 'reference': 'A.'}]
    """
    rows = records_of(samples) if is_dataframe(samples) else samples
    mapping = SampleMapping.for_rows()
    if not isinstance(rows, Sequence):
        return _mapped(mapping, rows, id_key)
    inputs = list(_mapped(mapping, rows, id_key))
    if any(isinstance(row, Mapping) for row in rows):  # Samples name their fields themselves
        _check_required(rows, inputs, required)
    return inputs


def _mapped(
    mapping: SampleMapping, rows: Iterable[Any], id_key: str | None
) -> Iterator[SampleLike]:
    # Every row is read as a dataset file's is, whatever brought it: one reading of fields.
    for number, row in enumerate(rows, start=1):
        if isinstance(row, Mapping):
            fields = mapping.fields_of(row, metric=f"row {number}")
            own_id = row_id(row, number=number, key=id_key)
            yield IdentifiedFields.of(fields, None if own_id == number_id(number) else own_id)
        else:  # a Sample, or something the metrics refuse, naming what it is
            yield row


def _check_required(rows: Sequence[Any], inputs: Sequence[Any], required: Iterable[str]) -> None:
    """Refuse a field the metrics need that no row has, naming the columns seen."""
    if not inputs:
        return
    for name in dict.fromkeys(field for field in required if field in ROW_RULES):
        if any(_has(each, name) for each in inputs):
            continue
        columns = dict.fromkeys(str(key) for row in rows if isinstance(row, Mapping) for key in row)
        seen = f"; keys seen: {', '.join(columns) or 'none'}" if columns else ""
        raise ValueError(
            f"no sample has a {name} field, which the metrics need (looked for "
            f"{' / '.join(ROW_RULES[name].keys)}{seen}); rename the key, or map it with "
            f"samples_from_records(rows, {name}='KEY')"
        )


def _has(value: Any, name: str) -> bool:
    if isinstance(value, Mapping):
        return value.get(name) is not None
    return getattr(value, name, None) is not None


def read_parquet(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a Parquet file as dicts of plain values (list columns are lists)."""
    try:
        import pyarrow.parquet as pq
    except ImportError as error:
        raise ImportError(f"reading Parquet needs pyarrow ({error}); {PANDAS_HINT}") from None
    table = pq.read_table(str(path))
    return [{str(key): plain(value) for key, value in row.items()} for row in table.to_pylist()]


def outcome_cells(key: str, outcome: Any) -> dict[str, Any]:
    """The five columns of one metric's outcome: a :class:`MetricResult` or an error
    (anything with ``error_type`` and ``message``, such as the runner's ``MetricError``)."""
    if isinstance(outcome, MetricResult):
        return {
            f"{key}_score": outcome.score,
            f"{key}_passed": outcome.passed,
            f"{key}_reason": outcome.reason,
            f"{key}_error": None,
            f"{key}_result": json.dumps(outcome.model_dump(mode="json"), ensure_ascii=False),
        }
    error = f"{getattr(outcome, 'error_type', type(outcome).__name__)}: "
    error += str(getattr(outcome, "message", outcome))
    return {
        f"{key}_score": None,
        f"{key}_passed": None,
        f"{key}_reason": None,
        f"{key}_error": error,
        f"{key}_result": None,
    }


def result_columns(keys: Sequence[str], rows: Sequence[Any]) -> dict[str, list[Any]]:
    """Per metric key, the five result columns of ``rows`` (the runner's
    ``SampleResults``: anything with ``results``, a dict from key to outcome)."""
    columns: dict[str, list[Any]] = {
        f"{key}_{suffix}": [] for key in keys for suffix in RESULT_SUFFIXES
    }
    for row in rows:
        for key in keys:
            for name, cell in outcome_cells(key, row.results.get(key)).items():
                columns[name].append(cell)
    return columns


def metric_keys(rows: Sequence[Any]) -> list[str]:
    """The metric keys of ``rows``, in the order they first appear."""
    return list(dict.fromkeys(key for row in rows for key in row.results))


def to_pandas(rows: Sequence[Any], inputs: Any = None) -> pd.DataFrame:
    """The runner's rows as a DataFrame: the ``inputs`` columns (a DataFrame, or a list of
    dicts or samples, one per row), else ``index``, then the result columns per metric."""
    try:
        import pandas as pd
    except ImportError as error:
        raise ImportError(f"to_pandas() needs pandas ({error}); {PANDAS_HINT}") from None
    keys = metric_keys(rows)
    results = pd.DataFrame(result_columns(keys, rows))
    results = results.astype(
        {f"{key}_{suffix}": kind for key in keys for suffix, kind in _DTYPES.items()}
    )
    if inputs is None:
        results.insert(0, "index", [row.index for row in rows])
        return results
    frame = inputs if is_dataframe(inputs) else pd.DataFrame([_as_record(i) for i in inputs])
    frame = frame.reset_index(drop=True)
    if len(frame) != len(results):
        raise ValueError(f"{len(frame)} input rows for {len(results)} result rows")
    clashes = sorted(set(frame.columns) & set(results.columns))
    if clashes:
        raise ValueError(f"input columns clash with result columns: {', '.join(clashes)}")
    return pd.concat([frame, results], axis=1)


_DTYPES = {
    "score": "Float64",
    "passed": "boolean",
    "reason": "string",
    "error": "string",
    "result": "string",
}


def _as_record(value: Any) -> dict[str, Any]:
    if isinstance(value, Sample):
        return value.model_dump()
    return dict(value)
