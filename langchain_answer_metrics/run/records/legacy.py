"""What the runner's ``checkpoint=`` wrote before the one records format: still read, so
that a run checkpointed by an earlier version resumes with the same command.

A line of that format: ``{"checkpoint": 1, "index": 0, "fingerprint": "...", "metrics":
{key: {"signature": "...", "result": {...}} or {"signature": "...", "error": {...}}}}``,
one per finished sample, keyed by the sample's position from 0 (read as a record whose
``id`` is the sample's number, counted from 1, as the records number a sample without an
id: :mod:`.identity`). Its
batches were kept beside it, in ``<checkpoint>.batches`` (the CLI: ``OUT.batches``):
:func:`old_batch_file`.

    >>> checkpoint_record({"checkpoint": 1, "index": 0, "fingerprint": "f", "metrics": {}})
    SampleRecord(schema_version=2, id='1', fingerprint='f', ...)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from langchain_answer_metrics.core.result import MetricResult
from langchain_answer_metrics.run.records.building import metric_record
from langchain_answer_metrics.run.records.format import (
    SCHEMA_VERSION,
    ErrorRecord,
    MetricRecord,
    SampleRecord,
)
from langchain_answer_metrics.run.records.identity import number_id

__all__ = ["CHECKPOINT_START", "checkpoint_record", "old_batch_file"]

CHECKPOINT_START = b'{"checkpoint": '
"""How an old checkpoint's line begins (a line of it cut short is ours to drop)."""

_VERSION = 1


def checkpoint_record(value: dict[str, Any]) -> SampleRecord | None:
    """An old checkpoint line as a record (its id the sample's number); None for a line
    of another version, or one missing its fields. Raises ValueError for a saved result
    that does not read as one."""
    index, metrics = value.get("index"), value.get("metrics")
    if value.get("checkpoint") != _VERSION or not isinstance(index, int):
        return None
    if not isinstance(metrics, dict):
        return None
    return SampleRecord(
        schema_version=SCHEMA_VERSION,
        id=number_id(index + 1),
        fingerprint=str(value.get("fingerprint", "")),
        metrics={
            str(key): _metric(str(entry.get("signature", "")), entry)
            for key, entry in metrics.items()
            if isinstance(entry, dict)
        },
    )


def _metric(signature: str, entry: dict[str, Any]) -> MetricRecord:
    """A metric's entry of an old checkpoint line, as the record's entry (the result kept
    whole, as it was saved)."""
    result, error = entry.get("result"), entry.get("error")
    if isinstance(result, dict):
        record = metric_record(MetricResult.model_validate(result), signature)
        return record.model_copy(update={"result": result})
    error = error if isinstance(error, dict) else {}
    return MetricRecord(
        error=ErrorRecord(
            type=str(error.get("error_type", "Error")), message=str(error.get("message", ""))
        ),
        signature=signature,
    )


def old_batch_file(records: str | os.PathLike[str]) -> Path:
    """Where an earlier version kept the batches of the run writing ``records``."""
    return Path(f"{os.fspath(records)}.batches")
