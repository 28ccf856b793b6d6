"""A batch run's batches, kept in the run's records stream as soon as each is created.

    >>> state = batch_state_for("run.jsonl")   # the checkpoint, or the CLI's --out
    >>> state.unfinished()                      # the batches a resume polls, never resends

A batch's line (``{"schema_version": 2, "kind": "batch", "batch_id": ..., "custom_ids":
[...], "samples": {...}}``) says what each of its lines is for; an ``ended`` line its
status and the provider's reason. They are appended, flushed and fsynced, through the
file's one writer (:mod:`.writer`), between the samples' records; readers of records pass
over them. The side file an earlier version kept (``<checkpoint>.batches``,
``OUT.batches``) is read too, and so is a ``batch_state=`` file of that format, which
goes on in it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from langchain_answer_metrics.checkpoints import iter_lines
from langchain_answer_metrics.judging.batch.state import BatchState
from langchain_answer_metrics.run.records.format import batch_line, is_batch_line
from langchain_answer_metrics.run.records.legacy import old_batch_file
from langchain_answer_metrics.run.records.writer import shared_writer

__all__ = ["batch_state_for"]


def batch_state_for(records: str | os.PathLike[str] | None) -> BatchState:
    """The batches of the run whose records are kept in ``records`` (None: in memory,
    no resume): those saved in it and in its old side file; new ones appended to it."""
    if records is None:
        return BatchState(None)
    path = Path(records)
    if _is_old_side_file(path):
        return BatchState(path)  # an earlier version's file, named by batch_state=
    side = old_batch_file(path)
    return BatchState(
        side if side.is_file() else None,
        saved=list(_batch_lines(path)),
        keep=lambda fields: _keep(path, fields),
    )


def _batch_lines(path: Path) -> Iterator[dict[str, Any]]:
    if not path.is_file():
        return
    for _, value in iter_lines(path):
        if is_batch_line(value):
            yield value


def _is_old_side_file(path: Path) -> bool:
    """Whether ``path`` is a side file of an earlier version: its lines are batches'
    (``kind``) without the records' ``schema_version``."""
    if not path.is_file():
        return path.name.endswith(".batches")
    for _, value in iter_lines(path):
        return isinstance(value, dict) and "kind" in value and "schema_version" not in value
    return path.name.endswith(".batches")


def _keep(path: Path, fields: Mapping[str, Any]) -> None:
    with shared_writer(path) as writer:
        writer.append(batch_line(fields))
