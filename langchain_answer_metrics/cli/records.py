"""The CLI's side of the run's records (one line of ``--out`` per sample): a record of a
dataset row, and the statistics over records that the table, the report and
``--summary-json`` show.

    >>> record = sample_record(row, results, signatures)       # one JSON line of --out
    >>> records, unreadable = read_records(Path("results.jsonl"))
    >>> overviews = overview(list(records.values()), ["faithfulness"], {"faithfulness": 0.7})

The format itself, the one the runner's ``checkpoint=`` writes too, is
:mod:`langchain_answer_metrics.run.records.format` (documented in docs/records.md); its
names are re-exported here for the CLI's modules.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from pydantic import BaseModel, Field

from langchain_answer_metrics.agents.sample import task_and_answer
from langchain_answer_metrics.cli.datasets import DatasetRow
from langchain_answer_metrics.core.result import MetricResult
from langchain_answer_metrics.run.records import building
from langchain_answer_metrics.run.records.building import metric_record
from langchain_answer_metrics.run.records.format import (
    SCHEMA_VERSION,
    ClaimRecord,
    ContextRecord,
    ErrorRecord,
    MetricRecord,
    SampleRecord,
    VoteRecord,
    record_line,
)
from langchain_answer_metrics.run.records.reading import (
    RECORD_STARTS,
    as_record,
    is_record_value,
    read_records,
)
from langchain_answer_metrics.run.results import MetricError
from langchain_answer_metrics.run.summary import MetricSummary, summarize

__all__ = [
    "RECORD_STARTS",
    "SCHEMA_VERSION",
    "ClaimRecord",
    "ContextRecord",
    "ErrorRecord",
    "MetricOverview",
    "MetricRecord",
    "SampleRecord",
    "VoteRecord",
    "as_record",
    "is_record_value",
    "metric_record",
    "overview",
    "read_records",
    "record_line",
    "sample_record",
]


def sample_record(
    row: DatasetRow,
    results: Mapping[str, MetricResult | MetricError],
    signatures: Mapping[str, str],
    previous: SampleRecord | None = None,
) -> SampleRecord:
    """The ``--out`` line for ``row``: ``previous`` (a resumed row) updated with ``results``
    (an agent's row keeps its task and final answer as the texts)."""
    text = {**row.sample.model_dump(), **(task_and_answer(row.agent) if row.agent else {})}
    return building.sample_record(row.id, row.fingerprint, text, results, signatures, previous)


# --------------------------------------------------------------------------- statistics


class MetricOverview(BaseModel):
    """What the table and the report show for one metric."""

    summary: MetricSummary
    per_model: dict[str, float | None] = Field(default_factory=dict)
    histogram: list[int] = Field(default_factory=list, description="Scores in 10 bins of 0.1.")


def overview(
    records: Iterable[SampleRecord],
    keys: Sequence[str],
    thresholds: Mapping[str, float] | None = None,
) -> list[MetricOverview]:
    """Per metric: the summary statistics, the mean per model and the score histogram.

    ``records`` is read once, and only the scores are kept: a run of any length can be
    summarised from its ``--out`` file.
    """
    thresholds = thresholds or {}
    scores: dict[str, list[float | None]] = {key: [] for key in keys}
    by_model: dict[str, dict[str, list[float | None]]] = {key: {} for key in keys}
    histograms = {key: [0] * 10 for key in keys}
    # Not applicable (no score, no error: not a failed sample) and no claims (abstentions).
    not_applicable, no_claims = dict.fromkeys(keys, 0), dict.fromkeys(keys, 0)
    for record in records:
        for key in keys:
            entry = record.metrics.get(key)
            if entry is None:
                continue
            no_claims[key] += entry.no_claims
            if entry.not_applicable is not None:
                not_applicable[key] += 1
                continue
            scores[key].append(entry.score)
            for model, model_score in entry.per_model.items():
                by_model[key].setdefault(model, []).append(model_score)
            if entry.score is not None and math.isfinite(entry.score):
                histograms[key][min(9, int(entry.score * 10))] += 1
    return [
        MetricOverview(
            summary=summarize(
                key,
                scores[key],
                threshold=thresholds.get(key),
                not_applicable=not_applicable[key],
                no_claims=no_claims[key],
            ),
            per_model={
                model: summarize(model, values).mean for model, values in by_model[key].items()
            },
            histogram=histograms[key],
        )
        for key in keys
    ]
