"""The checkpoint's part in a run: what a rerun reuses, and each finished row kept.

>>> keeper = Keeper("run.jsonl", metrics, keep_degraded=False)
>>> saved, fingerprint = keeper.reusable(0, sample)

The checkpoint is a records file, the format of the CLI's ``--out``
(:mod:`~langchain_answer_metrics.run.records`): a line per finished sample, its id and
fingerprint defined as the CLI's (:mod:`~.records.identity`: a dict row's ``id``, else its
number from 1), so an ``--out`` file resumes here and a checkpoint in the CLI. What a
rerun reuses is decided by the one planner (:func:`~.records.plan.still_to_score`), as
for ``--out``. One run writes it at a time: the
first use takes the lock beside the file (:mod:`~..checkpoints.locks`), so a second run on
the same checkpoint refuses at once, naming the first one's process; a lock left by a
killed run is taken over.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from langchain_answer_metrics.checkpoints import metric_signature, sample_fingerprint
from langchain_answer_metrics.checkpoints.judge_settings import judges_changed_notice
from langchain_answer_metrics.checkpoints.locks import OutputBusyError, output_lock
from langchain_answer_metrics.core.result import MetricResult
from langchain_answer_metrics.core.sample import SampleLike
from langchain_answer_metrics.metrics.base import AnswerMetric
from langchain_answer_metrics.run.records.building import restored_result, sample_record
from langchain_answer_metrics.run.records.format import TEXT_FIELDS, record_line
from langchain_answer_metrics.run.records.identity import earlier_fingerprints, number_id
from langchain_answer_metrics.run.records.plan import judged_otherwise, still_to_score
from langchain_answer_metrics.run.records.saved import SavedRecords
from langchain_answer_metrics.run.records.writer import RecordsWriter, shared_writer
from langchain_answer_metrics.run.results import SampleResults

__all__ = ["CheckpointBusyError", "Keeper"]


class CheckpointBusyError(OutputBusyError):
    """Another run holds the checkpoint: it refuses at once, naming that run's process.

    Example:
        >>> evaluate_dataset(samples, metrics, checkpoint="run.jsonl")  # while another runs
        CheckpointBusyError: checkpoint run.jsonl: another run is writing it (process 4242) ...
    """

    def __init__(self, path: Path, pid: int | None) -> None:
        super().__init__(path, pid)
        holder = f"process {pid}" if pid is not None else "another process"
        self.args = (
            f"checkpoint {path}: another run is writing it ({holder}); wait for it to end, "
            "or pass another checkpoint",
        )


class Keeper:
    """Reads back a sample's saved results and appends finished rows (none without a
    checkpoint path: then every sample is scored and nothing is kept)."""

    def __init__(
        self,
        checkpoint: str | os.PathLike[str] | None,
        metrics: Sequence[AnswerMetric],
        *,
        keep_degraded: bool,
    ) -> None:
        self.metrics = list(metrics)
        self.path = Path(checkpoint) if checkpoint else None
        self.keep_degraded = keep_degraded
        self.signatures = (
            {metric.key: metric_signature(metric) for metric in metrics} if checkpoint else {}
        )
        self.saved: SavedRecords | None = None
        self._ids: dict[str, int] = {}  # the samples' ids read so far, and their index
        self._held = contextlib.ExitStack()
        self._writer: RecordsWriter | None = None
        # The id and texts of each sample started, until kept.
        self._started: dict[int, tuple[str, dict[str, Any]]] = {}
        self._said: set[str] = set()  # the metrics whose judges' change was warned of

    def _open(self) -> SavedRecords:
        """Take the lock, then index the file (raises CheckpointBusyError, OSError, ValueError)."""
        if self.saved is None:
            assert self.path is not None
            try:
                self._held.enter_context(output_lock(self.path))
            except OutputBusyError as busy:
                raise CheckpointBusyError(self.path, busy.pid) from None
            except OSError as error:  # a system that refuses locks (NFS without lockd)
                reason = f"checkpoint {self.path}: cannot lock it ({error.strerror})"
                raise OSError(error.errno, reason) from None
            saved = SavedRecords.load(self.path, what="checkpoint")
            if saved.unreadable:
                # A line cut short by a kill: dropped now, so the offsets are the file's.
                saved.drop_torn_lines()
            self.saved = saved
        return self.saved

    def reusable(self, index: int, sample: SampleLike) -> tuple[dict[str, Any], str]:
        """The saved outcomes a rerun reuses for the sample at ``index`` (as JSON, by
        metric key), and the sample's fingerprint ("" without a checkpoint).

        Raises:
            ValueError: the sample's id is an earlier sample's (nothing is scored past it).
        """
        if self.path is None:
            return {}, ""
        saved = self._open()
        sample_id = self._id_of(index, sample)
        fingerprint = sample_fingerprint(sample)
        record = saved.lookup(sample_id, fingerprint, lambda: earlier_fingerprints(sample))
        if record is None and sample_id != number_id(index + 1):
            # Saved by its number (a checkpoint of an earlier version, which numbered
            # every sample): the same text, so the same scores.
            record = saved.lookup(number_id(index + 1), fingerprint)
        missing = still_to_score(
            record, fingerprint, self.signatures, keep_degraded=self.keep_degraded
        )
        if missing:
            self._say_judged_otherwise(judged_otherwise(record, fingerprint, self.signatures))
        if len(missing) < len(self.signatures):
            assert record is not None
            kept = {
                key: restored_result(key, record.metrics[key]).model_dump(mode="json")
                for key in self.signatures
                if key not in missing
            }
        else:
            kept = {}
        if missing:
            self._started[index] = (sample_id, _text_of(sample))
        return kept, fingerprint

    def _say_judged_otherwise(self, saved_judges: Mapping[str, Mapping[str, Any]]) -> None:
        """Warn once per metric, before its sample is scored, that saved scores whose
        judges (``saved_judges``, by metric key) had other model ids or settings are
        scored again (and how to keep them)."""
        for key, judges in saved_judges.items():
            if key not in self._said:
                self._said.add(key)
                metric = next(metric for metric in self.metrics if metric.key == key)
                notice = judges_changed_notice(key, None, metric, judges)
                warnings.warn(f"checkpoint {self.path}: {notice}", UserWarning, stacklevel=2)

    def check_ids(self, samples: Sequence[SampleLike]) -> None:
        """Refuse a list whose samples' ids repeat before the run starts (a stream is
        checked as it is read: :meth:`reusable`). Raises ValueError."""
        if self.path is not None:
            seen: dict[str, int] = {}
            for index, sample in enumerate(samples):
                self._check_id(seen, index, sample)

    def _id_of(self, index: int, sample: SampleLike) -> str:
        """The sample's id in the records: its own (a dict row's ``id_key``), else its
        number; refused when an earlier sample has it."""
        return self._check_id(self._ids, index, sample)

    def _check_id(self, seen: dict[str, int], index: int, sample: SampleLike) -> str:
        sample_id = getattr(sample, "row_id", None) or number_id(index + 1)
        first = seen.setdefault(sample_id, index)
        if first != index:
            raise ValueError(
                f"checkpoint {self.path}: the samples at index {first} and {index} have the "
                f"same id {sample_id!r}, and a checkpoint finds a sample's scores by its id; "
                "make the ids unique, or pass id_key= naming another key (id_key=None "
                "numbers the samples)"
            )
        return sample_id

    def merged(self, row: SampleResults, saved: dict[str, Any]) -> SampleResults:
        """``row`` with the metrics read back beside those scored now, in metric order."""
        if not saved:
            return row
        restored = {key: MetricResult.model_validate(value) for key, value in saved.items()}
        merged = {**restored, **row.results}
        return SampleResults(
            index=row.index, results={metric.key: merged[metric.key] for metric in self.metrics}
        )

    def keep(self, row: SampleResults, fingerprint: str) -> None:
        """Append a row scored in this run (flushed and fsynced): its record, with the
        saved results it reused."""
        if self.path is None:
            return
        if self._writer is None:
            self._writer = self._held.enter_context(shared_writer(self.path))
        sample_id, text = self._started.pop(row.index, (number_id(row.index + 1), {}))
        record = sample_record(
            sample_id,
            fingerprint,
            text,
            row.results,
            self.signatures,
            whole=True,  # given back whole on a resume, details included
        )
        self._writer.append(record_line(record))

    def close(self) -> None:
        """Close the file and let go of its lock."""
        self._started.clear()
        self._ids.clear()
        self._held.close()
        self._writer = None


def _text_of(sample: SampleLike) -> dict[str, Any]:
    """The texts of ``sample`` a record keeps, where the sample has them as text."""
    fields = sample.model_dump() if isinstance(sample, BaseModel) else sample
    if not isinstance(fields, Mapping):
        return {}
    text: dict[str, Any] = {}
    for name in TEXT_FIELDS:
        value = fields.get(name)
        if isinstance(value, str) or (
            isinstance(value, list) and all(isinstance(item, str) for item in value)
        ):
            text[name] = value
    return text
