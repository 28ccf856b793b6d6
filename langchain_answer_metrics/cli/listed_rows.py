"""Rows held in a list scored into ``--out`` (``calibrate``): the records the file already
has, the rows still to score grouped by what they lack, and their run.

``evaluate`` reads its rows lazily and keeps its records on disk
(:mod:`~langchain_answer_metrics.cli.resume`); ``calibrate`` scores only the labelled
rows, which it holds, and keeps their records in memory for the statistics. Both plan
with the one planner, :func:`~langchain_answer_metrics.run.records.plan.still_to_score`,
and stream through :func:`~langchain_answer_metrics.cli.streaming.stream_rows`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from langchain_answer_metrics.cli.datasets import DatasetRow
from langchain_answer_metrics.cli.limits import RunLimits
from langchain_answer_metrics.cli.out_file import append_to_out
from langchain_answer_metrics.cli.plans import MetricPlan
from langchain_answer_metrics.cli.records import SampleRecord, record_line
from langchain_answer_metrics.cli.resume import SavedRecords
from langchain_answer_metrics.cli.streaming import StreamSettings, stream_rows
from langchain_answer_metrics.run.records.identity import own_record
from langchain_answer_metrics.run.records.plan import still_to_score

__all__ = ["plan_groups", "previous_records", "score_groups"]


def previous_records(out: Path | None, data: Path) -> dict[str, SampleRecord]:
    """The records already in ``--out``, refusing a file that is not a results file."""
    return SavedRecords.load(out, data).records()


def _saved(previous: Mapping[str, SampleRecord], row: DatasetRow) -> SampleRecord | None:
    """The saved record of ``row``, unless the row's text changed since."""
    return own_record(previous.get(row.id), row.id, row.fingerprint, row.earlier_fingerprints)


def plan_groups(
    rows: Sequence[DatasetRow],
    previous: Mapping[str, SampleRecord],
    signatures: Mapping[str, str],
    *,
    keep_degraded: bool = False,
) -> dict[tuple[str, ...], list[DatasetRow]]:
    """The rows still to score, grouped by the metrics each one lacks.

    A resumed row with one metric already scored is not scored again for it. Usually
    there is a single group: every metric for the rows not yet in ``--out``. A score
    from which a judge was excluded (a transient failure) is redone unless
    ``keep_degraded``.
    """
    groups: dict[tuple[str, ...], list[DatasetRow]] = {}
    for row in rows:
        saved = _saved(previous, row)
        missing = still_to_score(saved, row.fingerprint, signatures, keep_degraded=keep_degraded)
        if missing:
            groups.setdefault(missing, []).append(row)
    return groups


def score_groups(
    groups: Mapping[tuple[str, ...], Sequence[DatasetRow]],
    plans: Sequence[MetricPlan],
    previous: Mapping[str, SampleRecord],
    records: dict[str, SampleRecord],
    out: TextIO | None,
    *,
    out_path: Path | None,
    settings: StreamSettings,
    limits: RunLimits | None = None,
) -> int:
    """:func:`~.streaming.stream_rows` over rows held in lists: each record is kept in
    ``records`` and appended to ``out`` (the file ``out_path``)."""

    def save(record: SampleRecord, results: Mapping[str, Any]) -> None:
        records[record.id] = record
        if out is not None and out_path is not None:
            append_to_out(out, record_line(record), out_path)

    return stream_rows(
        [(missing, len(rows), rows) for missing, rows in groups.items()],
        plans,
        lambda row: _saved(previous, row),
        save,
        settings,
        limits,
    )
