"""``--summary-json PATH``: the run's summary for CI, as one JSON object.

Keys: ``data``, ``samples``, ``scored``, ``samples_with_errors``, ``degraded_samples``,
``not_run`` and ``stopped`` (why, when a limit or a failing endpoint stopped the run),
``metrics`` (per metric: mean, CI, pass rate, errors, ``not_applicable`` - samples left out
of the statistics, neither scored nor failed - and ``no_claims`` - responses that made no
claim, abstentions - and per model), ``usage`` (per usage
label), ``cost`` (what the run spent in USD; null unless every model that spent has a
price), ``spend`` (requests, tokens, cache hits and cost per model and per metric, see
:func:`~.spend_view.spend_json`) and ``exit_code``. Usage, cost and spend are this run's:
samples resumed from ``--out`` were paid for before.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_answer_metrics.checkpoints import write_atomically
from langchain_answer_metrics.cli.limits import RunLimits
from langchain_answer_metrics.cli.options import UsageError
from langchain_answer_metrics.cli.output.spend_view import spend_json, usage_by_label
from langchain_answer_metrics.cli.records import MetricOverview
from langchain_answer_metrics.run.spend import Spend


def write_summary_json(
    path: Path,
    *,
    data: Path,
    samples: int,
    scored: int,
    failed: int,
    degraded: int,
    limits: RunLimits,
    overviews: Sequence[MetricOverview],
    spent: Iterable[Mapping[str, Any]],
    spend: Spend,
    exit_code: int,
) -> None:
    summary: dict[str, Any] = {
        "data": str(data),
        "samples": samples,
        "scored": scored,
        "samples_with_errors": failed,
        "degraded_samples": degraded,
        "not_run": limits.not_run,
        "stopped": (
            {**limits.stop.model_dump(), "not_run": limits.not_run}
            if limits.stop is not None
            else None
        ),
        "metrics": {
            item.summary.key: {**item.summary.model_dump(), "per_model": item.per_model}
            for item in overviews
        },
        "usage": {label: usage.model_dump() for label, usage in usage_by_label(spent).items()},
        "cost": None if spend.unpriced else (spend.total.cost or 0.0),
        "spend": spend_json(spend),
        "exit_code": exit_code,
    }
    try:
        # Whole or not at all: a full disk leaves the previous summary, or none.
        write_atomically(path, [json.dumps(summary, indent=2) + "\n"])
    except OSError as error:
        raise UsageError(
            f"--summary-json {path}: cannot write it ({error.strerror or error}); "
            "any earlier summary there is left as it was"
        ) from None
