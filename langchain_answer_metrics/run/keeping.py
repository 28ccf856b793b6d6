"""The checkpoint's part in a run: what a rerun reuses, and each finished row kept.

>>> keeper = Keeper("run.jsonl", metrics, keep_degraded=False)
>>> saved, fingerprint = keeper.reusable(0, sample)
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from langchain_answer_metrics.checkpoints import Checkpoint, metric_signature, sample_fingerprint
from langchain_answer_metrics.core.result import MetricResult
from langchain_answer_metrics.core.sample import SampleLike
from langchain_answer_metrics.metrics.base import AnswerMetric
from langchain_answer_metrics.run.results import SampleResults


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
        signatures = {metric.key: metric_signature(metric) for metric in metrics}
        self.store = (
            Checkpoint(checkpoint, signatures, keep_degraded=keep_degraded) if checkpoint else None
        )

    def reusable(self, index: int, sample: SampleLike) -> tuple[dict[str, Any], str]:
        """The saved outcomes a rerun reuses for the sample at ``index``, by metric key, and
        the sample's fingerprint ("" without a checkpoint)."""
        if self.store is None:
            return {}, ""
        fingerprint = sample_fingerprint(sample)
        return self.store.reusable(index, fingerprint), fingerprint

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
        """Append a row scored in this run (flushed and fsynced)."""
        if self.store is not None:
            self.store.append(row.index, fingerprint, row.checkpoint_outcomes())

    def close(self) -> None:
        if self.store is not None:
            self.store.close()
