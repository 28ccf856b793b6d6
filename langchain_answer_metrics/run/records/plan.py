"""The one planner of a resume: which metrics a sample still lacks, given its saved record.

A saved score is kept when the sample's text is the same (its fingerprint) and the metric
the same (its signature: settings, models and prompts, :mod:`~..checkpoints.signatures`);
errors are always scored again, and so are scores from which a judge was excluded (a
transient failure) unless ``keep_degraded``. The runner's ``checkpoint=``
(:class:`~.keeping.RunRecords`) and the CLI's ``--out`` (:func:`plan_resume`) both ask
:func:`still_to_score`.

    >>> still_to_score(saved, row.fingerprint, {"faithfulness": signature})
    ('faithfulness',)
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Protocol, TypeVar

from langchain_answer_metrics.checkpoints.fingerprints import judges_differ
from langchain_answer_metrics.run.records.format import SampleRecord

__all__ = ["ResumePlan", "judged_otherwise", "plan_resume", "still_to_score"]


def still_to_score(
    saved: SampleRecord | None,
    fingerprint: str,
    signatures: Mapping[str, str],
    *,
    keep_degraded: bool = False,
) -> tuple[str, ...]:
    """The keys of ``signatures`` (metric key: signature) that a sample with
    ``fingerprint`` must be scored for, in their order, given its ``saved`` record."""
    if saved is None or saved.fingerprint != fingerprint:
        return tuple(signatures)
    return tuple(
        key
        for key, signature in signatures.items()
        if not saved.scored(key, signature, keep_degraded=keep_degraded)
    )


def judged_otherwise(
    saved: SampleRecord | None, fingerprint: str, signatures: Mapping[str, str]
) -> dict[str, dict[str, dict[str, Any]]]:
    """The keys of ``signatures`` whose saved score (a score, for the same text) is passed
    over only because its judges had other model ids or settings, each with the judges
    its record keeps (empty in a line that kept none): what a resume says."""
    if saved is None or saved.fingerprint != fingerprint:
        return {}
    return {
        key: record.judges
        for key, signature in signatures.items()
        if (record := saved.metrics.get(key)) is not None
        and record.error is None
        and judges_differ(record.signature, signature)
    }


class Row(Protocol):
    """What the planner reads of a dataset row: its id and fingerprint."""

    @property
    def id(self) -> str: ...

    @property
    def fingerprint(self) -> str: ...


R = TypeVar("R", bound=Row)


class ResumePlan:
    """Which metrics each row still lacks: a group (``missing`` metric keys) per row,
    numbered, so a row costs a few bytes however long its text."""

    NOTHING = -1

    def __init__(self) -> None:
        self.groups: dict[tuple[str, ...], int] = {}  # in order of first appearance
        self.sizes: list[int] = []
        self.of_row = array("i")  # the group of each row, in file order
        self.rows = 0
        # Saved scores passed over because their judges had other settings, by metric,
        # and the judges of the first one (what a resume names as differing).
        self.judged_otherwise: dict[str, int] = {}
        self.saved_judges: dict[str, dict[str, dict[str, Any]]] = {}

    @property
    def pending(self) -> int:
        return sum(self.sizes)

    def rows_of(self, rows: Callable[[], Iterable[R]], missing: tuple[str, ...]) -> Iterator[R]:
        """The rows of group ``missing``, read again from ``rows``."""
        number = self.groups[missing]
        return (row for row, group in zip(rows(), self.of_row) if group == number)


def plan_resume(
    rows: Callable[[], Iterable[R]],
    saved: Callable[[R], SampleRecord | None],
    signatures: Mapping[str, str],
    *,
    keep_degraded: bool = False,
) -> ResumePlan:
    """Read ``rows`` once and group them by the metrics each one lacks
    (:func:`still_to_score` of its ``saved`` record). Usually there is a single group:
    every metric for the rows not yet saved."""
    plan = ResumePlan()
    for row in rows():
        record = saved(row)
        missing = still_to_score(record, row.fingerprint, signatures, keep_degraded=keep_degraded)
        passed_over = judged_otherwise(record, row.fingerprint, signatures) if missing else {}
        for key, judges in passed_over.items():
            plan.judged_otherwise[key] = plan.judged_otherwise.get(key, 0) + 1
            plan.saved_judges.setdefault(key, judges)
        plan.rows += 1
        if not missing:
            plan.of_row.append(plan.NOTHING)
            continue
        number = plan.groups.setdefault(missing, len(plan.groups))
        if number == len(plan.sizes):
            plan.sizes.append(0)
        plan.sizes[number] += 1
        plan.of_row.append(number)
    return plan
