"""What a finished run says about its samples before it exits: how many have errors or
were scored without a failed judge, and whether a ``--fail-under`` gate failed.

    >>> scored, failed, degraded = outcomes(records, ["faithfulness"])
    >>> gate(overviews, {"faithfulness": 0.7})
    False
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langchain_answer_metrics.cli.output.printing import for_terminal
from langchain_answer_metrics.cli.records import MetricOverview, MetricRecord, SampleRecord
from langchain_answer_metrics.metrics.explain import counted

__all__ = ["gate", "outcomes"]


def outcomes(records: Iterable[SampleRecord], keys: Sequence[str]) -> tuple[int, int, int]:
    """Print how many samples have errors (and the commonest error) and how many were
    scored without a judge that failed; return how many records there are, and both
    counts."""
    errors: dict[str, int] = {}
    shown: dict[str, str] = {}  # the summary printed each metric's first error: by key
    first_seen: set[str] = set()
    excluded: dict[str, list[Any]] = {}  # per judge left out: [samples, the first why]
    count = failed = degraded = 0
    for record in records:
        count += 1
        entries = {key: record.metrics[key] for key in keys if key in record.metrics}
        kinds = dict.fromkeys(_kind(e) for e in entries.values() if e.error is not None)
        for key, entry in entries.items():
            if entry.error is not None and key not in first_seen:
                first_seen.add(key)
                shown.setdefault(_kind(entry), key)
        for kind in kinds:
            errors[kind] = errors.get(kind, 0) + 1
        failed += bool(kinds)
        degraded += any(entry.excluded for entry in entries.values())
        left_out = {item.get("model", ""): item for e in entries.values() for item in e.excluded}
        for model, item in left_out.items():
            excluded.setdefault(model, [0, _why(item)])[0] += 1
    if failed:
        commonest = max(errors, key=errors.__getitem__)
        # Each distinct error is printed once on the terminal: the summary's, if it printed
        # this one where this line goes. Apart (stdout to a file or a pipe), each says it.
        said = commonest
        if commonest in shown and _one_stream():
            said = f"the error shown above for {shown[commonest]}"
        print(
            for_terminal(
                f"samples with errors: {failed} of {count}; commonest ({errors[commonest]}): {said}"
            ),
            file=sys.stderr,
        )
    if degraded:
        print(
            f"degraded samples: {degraded} of {count} scored without a judge that "
            "failed (rerun to score them again; --keep-degraded keeps them)",
            file=sys.stderr,
        )
    for model, (samples, why) in excluded.items():  # each judge once: its first failure
        line = f"  {model} left out of {counted(samples, 'sample')}, first {why}"
        print(for_terminal(line), file=sys.stderr)
    return count, failed, degraded


def _one_stream() -> bool:
    """Whether stdout (where the summary printed each metric's first error) and stderr
    are the same open file: one terminal, or ``2>&1``."""
    try:
        out, err = os.fstat(sys.stdout.fileno()), os.fstat(sys.stderr.fileno())
    except (AttributeError, OSError, ValueError):  # a stream without a file: apart
        return False
    return (out.st_dev, out.st_ino, out.st_rdev) == (err.st_dev, err.st_ino, err.st_rdev)


def _why(excluded: Mapping[str, str]) -> str:
    step = excluded.get("step")
    return f"at {step}: {excluded.get('error', '')}" if step else excluded.get("error", "")


def _kind(entry: MetricRecord) -> str:
    error = entry.error
    return f"{error.type}: {error.message}" if error is not None else ""


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
