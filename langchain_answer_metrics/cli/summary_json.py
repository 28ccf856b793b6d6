"""``--summary-json PATH``: the run's summary for CI, as one JSON object.

Keys: ``data``, ``samples``, ``scored``, ``samples_with_errors``, ``degraded_samples``,
``not_run`` and ``stopped`` (why, when a limit or a failing endpoint stopped the run),
``metrics`` (per metric: mean, CI, pass rate, errors, per model), ``usage`` (per model
label) and ``exit_code``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_answer_metrics.cli.limits import RunLimits
from langchain_answer_metrics.cli.options import UsageError
from langchain_answer_metrics.cli.records import MetricOverview, SampleRecord
from langchain_answer_metrics.result import TokenUsage


def write_summary_json(
    path: Path,
    *,
    data: Path,
    samples: int,
    records: Sequence[SampleRecord],
    failed: int,
    degraded: int,
    limits: RunLimits,
    overviews: Sequence[MetricOverview],
    usage: Mapping[str, TokenUsage],
    exit_code: int,
) -> None:
    summary: dict[str, Any] = {
        "data": str(data), "samples": samples, "scored": len(records),
        "samples_with_errors": failed, "degraded_samples": degraded,
        "not_run": limits.not_run,
        "stopped": limits.stop.model_dump() if limits.stop is not None else None,
        "metrics": {
            item.summary.key: {**item.summary.model_dump(), "per_model": item.per_model}
            for item in overviews
        },
        "usage": {label: spent.model_dump() for label, spent in sorted(usage.items())},
        "exit_code": exit_code,
    }  # fmt: skip
    try:
        path.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    except OSError as error:
        raise UsageError(f"--summary-json {path}: cannot write it ({error})") from None
