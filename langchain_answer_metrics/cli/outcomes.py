"""What a finished run says about its samples before it exits: how many have errors or
were scored without a failed judge, and whether a ``--fail-under`` gate failed.

    >>> scored, failed, degraded = outcomes(records, ["faithfulness"])
    >>> gate(overviews, {"faithfulness": 0.7})
    False
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence

from langchain_answer_metrics.cli.output.printing import for_terminal
from langchain_answer_metrics.cli.records import MetricOverview, SampleRecord

__all__ = ["gate", "outcomes"]


def outcomes(records: Iterable[SampleRecord], keys: Sequence[str]) -> tuple[int, int, int]:
    """Print how many samples have errors (and the commonest error) and how many were
    scored without a judge that failed; return how many records there are, and both
    counts."""
    errors: dict[str, int] = {}
    count = failed = degraded = 0
    for record in records:
        count += 1
        entries = [record.metrics[key] for key in keys if key in record.metrics]
        kinds = {f"{e.error.type}: {e.error.message}" for e in entries if e.error is not None}
        for kind in kinds:
            errors[kind] = errors.get(kind, 0) + 1
        failed += bool(kinds)
        degraded += any(entry.excluded for entry in entries)
    if failed:
        commonest = max(errors, key=errors.__getitem__)
        print(
            for_terminal(
                f"samples with errors: {failed} of {count}; commonest "
                f"({errors[commonest]}): {commonest}"
            ),
            file=sys.stderr,
        )
    if degraded:
        print(
            f"degraded samples: {degraded} of {count} scored without a judge that "
            "failed (rerun to score them again; --keep-degraded keeps them)",
            file=sys.stderr,
        )
    return count, failed, degraded


def gate(overviews: Sequence[MetricOverview], gates: Mapping[str, float]) -> bool:
    """Whether a gated metric's mean is below its ``--fail-under`` limit (or missing);
    prints which."""
    failed = [
        item.summary.key
        for item in overviews
        if item.summary.key in gates
        and (item.summary.mean is None or item.summary.mean < gates[item.summary.key])
    ]
    if failed:
        print(f"answer-metrics: below --fail-under: {', '.join(failed)}", file=sys.stderr)
    return bool(failed)
