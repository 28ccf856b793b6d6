"""What a batch run keeps on disk so that a stopped or killed run resumes: its batches.

One JSON line per batch, kept (flushed and fsynced) as soon as the provider has
created it, before the run waits for it: the batch id, its input file, where it went
(judge label, model, base URL) and what each line is for (its ``custom_id``, the
digest of its request, and the samples waiting for it). A line when the batch ends
(its status and the provider's reason). Nothing of the judged text is kept here: the
requests themselves are in the provider's input file.

A rerun of the same command builds the same requests, so the same keys: a key found in
a saved batch waits for that batch (or reads its output) instead of going out again.

Where the lines go is the run's choice (``keep``): the run layer keeps them in the run's
records stream (:mod:`langchain_answer_metrics.run.records.batches`). Without ``keep``,
they are appended to ``path``, a file of their own (the side file of earlier versions).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

__all__ = ["BatchState", "SavedBatch"]


class SavedBatch(BaseModel):
    """One batch of the run, as kept on disk."""

    kind: Literal["batch"] = "batch"
    batch_id: str
    input_file_id: str
    label: str
    model: str
    base_url: str
    endpoint: str
    round: int
    custom_ids: list[str]
    samples: dict[str, list[int]] = Field(
        default_factory=dict, description="custom_id: the sample indices waiting for it"
    )
    status: str = "created"
    reason: str = ""


class _Ended(BaseModel):
    kind: Literal["ended"] = "ended"
    batch_id: str
    status: str
    reason: str = ""


class BatchState:
    """The batches of a run, read from ``path`` (if it exists) and from ``saved`` (lines
    kept elsewhere, as dicts), and kept as they are created and end: handed to ``keep``,
    else appended to ``path``. Neither: kept in memory only (no resume)."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None,
        *,
        saved: Iterable[Mapping[str, Any]] = (),
        keep: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.path = Path(path) if path is not None else None
        self.keep = keep
        self.batches: dict[str, SavedBatch] = {}
        self.by_key: dict[str, list[str]] = {}
        if self.path is not None and self.path.exists():
            for record in self._records():
                self._apply(record)
        for data in saved:
            parsed = _parsed(data)
            if parsed is not None:
                self._apply(parsed)

    def _records(self) -> Iterator[SavedBatch | _Ended]:
        assert self.path is not None
        for text in self.path.read_text(encoding="utf-8").splitlines():
            try:
                parsed = _parsed(json.loads(text))
            except ValueError:
                continue  # a line torn by a kill: the batch it named is looked up again
            if parsed is not None:
                yield parsed

    def _apply(self, record: SavedBatch | _Ended) -> None:
        if isinstance(record, SavedBatch):
            self.batches[record.batch_id] = record
            for key in record.custom_ids:
                self.by_key.setdefault(key, []).append(record.batch_id)
        elif record.batch_id in self.batches:
            saved = self.batches[record.batch_id]
            saved.status, saved.reason = record.status, record.reason

    def _append(self, record: SavedBatch | _Ended) -> None:
        self._apply(record)
        if self.keep is not None:
            self.keep(record.model_dump(mode="json"))
            return
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a+b") as file:
            # A line cut short by a kill is ended first, so it cannot swallow this one.
            file.seek(0, os.SEEK_END)
            if file.tell():
                file.seek(-1, os.SEEK_END)
                if file.read(1) != b"\n":
                    file.write(b"\n")
            file.write(record.model_dump_json().encode("utf-8") + b"\n")
            file.flush()
            os.fsync(file.fileno())

    def created(self, batch: SavedBatch) -> None:
        """Keep a batch the provider has just created (before waiting for it)."""
        self._append(batch)

    def ended(self, batch_id: str, status: str, reason: str = "") -> None:
        self._append(_Ended(batch_id=batch_id, status=status, reason=reason))

    def saved_for(self, key: str) -> list[SavedBatch]:
        """The saved batches holding a line with ``key``, newest last."""
        return [self.batches[batch_id] for batch_id in self.by_key.get(key, [])]

    def unfinished(self) -> list[SavedBatch]:
        """Batches not known to have ended (to poll, or to cancel)."""
        ended = ("completed", "failed", "expired", "cancelled")
        return [batch for batch in self.batches.values() if batch.status not in ended]


def _parsed(data: Any) -> SavedBatch | _Ended | None:
    """A batch's line (extra fields, such as a records stream's version, ignored), or
    None for anything else."""
    if not isinstance(data, Mapping):
        return None
    try:
        if data.get("kind") == "batch":
            return SavedBatch(**data)
        if data.get("kind") == "ended":
            return _Ended(**data)
    except (ValueError, TypeError):
        return None
    return None
