"""``--metric-file aligned.yaml``: a metric that ``answer-metrics align`` saved, as a metric
of the run (``evaluate``, ``calibrate``).

Each file is an entry beside the registry's (:func:`aligned_entries`, added to the run's
entries by :func:`~.declared.metric_entries`) keyed by the aligned metric's key, and is
chosen as if named with ``--metric``. It is built with the run's judges (``--config`` or
``--base-url``), matched by label; its signature is the runner's, so an ``--out`` file
scored by the metric before alignment is scored again, not resumed.

    answer-metrics evaluate qa.jsonl --metric-file aligned.yaml --config models.yaml
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_answer_metrics.analysis.aligned_metric import AlignedMetric, metric_class
from langchain_answer_metrics.checkpoints import metric_signature
from langchain_answer_metrics.cli.options import UsageError
from langchain_answer_metrics.core.sample import SAMPLE_FIELDS, SampleField
from langchain_answer_metrics.metrics.base import AnswerMetric
from langchain_answer_metrics.metrics.registry import METRICS, MetricEntry, MetricModels


@dataclass(frozen=True)
class AlignedFile(MetricEntry):
    """The entry of an aligned metric file: keyed by the aligned metric's key."""

    name: str = ""
    aligned: AlignedMetric | None = None
    path: Path | None = None

    @property
    def key(self) -> str:
        return self.name

    @property
    def required_fields(self) -> tuple[SampleField, ...]:
        assert self.aligned is not None
        if self.aligned.metric in METRICS:
            return METRICS[self.aligned.metric].required_fields
        prompt = self.aligned.settings.get("prompt")  # a CustomJudge's: its fields
        if not isinstance(prompt, str):
            return ("response",)
        named = {name for _, name, _, _ in string.Formatter().parse(prompt) if name}
        return tuple(field for field in SAMPLE_FIELDS if field in named) or ("response",)

    @property
    def needs_judge(self) -> bool:
        return True

    @property
    def needs_embeddings(self) -> bool:
        assert self.aligned is not None
        return self.aligned.select is not None  # examples chosen per sample

    def signature_of(self, metric: AnswerMetric) -> str:
        return metric_signature(metric)


def _read(path: Path) -> AlignedMetric:
    try:
        return AlignedMetric.read(path)
    except ValueError as error:
        raise UsageError(f"--metric-file {error}") from None


def _maker(aligned: AlignedMetric, path: Path) -> Any:
    def make(models: MetricModels, settings: Mapping[str, Any]) -> AnswerMetric:
        try:
            return aligned.build(list(models.judges), list(models.embedders) or None)
        except ValueError as error:
            raise UsageError(f"--metric-file {path}: {error}") from None

    return make


def aligned_entries(metric_files: Sequence[Path]) -> dict[str, MetricEntry]:
    """The entries of the ``--metric-file`` files, by key (none without the option)."""
    entries: dict[str, MetricEntry] = {}
    for path in metric_files:
        aligned = _read(Path(path))
        key = str(aligned.settings.get("name") or aligned.metric)
        if key in entries:
            raise UsageError(f"--metric-file {path}: a second metric keyed {key!r}")
        entries[key] = AlignedFile(
            metric_class(aligned.metric),
            _maker(aligned, Path(path)),
            name=key,
            aligned=aligned,
            path=Path(path),
        )
    return entries


def with_metric_files(metric: Sequence[str], metric_files: Sequence[Path]) -> list[str]:
    """``--metric`` with the keys of the ``--metric-file`` files after it (a key given
    both ways is refused: which one to score would be a guess)."""
    keys = list(aligned_entries(metric_files))
    named = [n.strip() for value in metric for n in value.split(",") if n.strip()]
    both = [key for key in keys if key in named]
    if both:
        raise UsageError(f"--metric {both[0]} and a --metric-file keyed {both[0]!r}: give one")
    return [*metric, *keys]
