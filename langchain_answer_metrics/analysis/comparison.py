"""Compare two runs of the same dataset, sample by sample: did the candidate regress?

    >>> result = compare(baseline_rows, candidate_rows)     # two --out files' records
    >>> metric = result.metrics["faithfulness"]
    >>> metric.mean_diff, (metric.ci_low, metric.ci_high), metric.p_value

Samples are paired by id. Per metric: the paired mean difference (candidate - baseline)
with a paired bootstrap 95% CI (:func:`langchain_answer_metrics.run.summary.bootstrap_ci` of
the differences) and a two-sided sign-flip permutation p-value; counts of samples
improved, regressed and unchanged; the most regressed samples with both responses and
reasons. Samples in one run only (``unpaired``) and pairs where either run failed
(``errors``) are counted, never silently dropped; so are pairs where the metric does not
apply in either run (``not_applicable_baseline`` / ``_candidate``: a response with no
claims, an abstention), left out of the paired statistics.

A row is a record of an ``--out`` file (a ``SampleRecord`` or its dict): an ``id``, a
``response`` and ``metrics`` by key, each with a ``score``, a ``reason`` and an ``error``.
"""

from __future__ import annotations

import itertools
import math
from array import array
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from langchain_answer_metrics.run.summary import bootstrap_ci

EXACT_UP_TO = 16
"""Up to this many non-zero differences the permutation test enumerates every sign flip."""
PERMUTATIONS = 10_000
TOLERANCE = 1e-9
_SIGNS_PER_CHUNK = 1_000_000
"""Sign flips drawn at once by the permutation test (8 MB of signs)."""
WORST = 5


class SideBySide(BaseModel):
    """One sample in both runs."""

    id: str
    user_input: str | None = None
    baseline_score: float
    candidate_score: float
    diff: float
    baseline_response: str | None = None
    candidate_response: str | None = None
    baseline_reason: str = ""
    candidate_reason: str = ""


# The per-metric columns a comparison is shown with, in the terminal and in HTML.
COMPARISON_COLUMNS: tuple[str, ...] = (
    "metric",
    "paired",
    "baseline",
    "candidate",
    "diff",
    "95% CI",
    "p",
    "improved",
    "regressed",
    "unchanged",
    "unpaired",
    "errors",
)


class MetricComparison(BaseModel):
    key: str
    n_paired: int
    mean_baseline: float | None = None
    mean_candidate: float | None = None
    mean_diff: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    p_value: float | None = None
    improved: int = 0
    regressed: int = 0
    unchanged: int = 0
    unpaired: int = Field(0, description="Samples with this metric in one run only.")
    errors: int = Field(0, description="Paired samples where either run failed on it.")
    not_applicable_baseline: int = Field(
        0,
        description="Paired samples left out, the metric not applying to the baseline's "
        "response (no claims) and nothing failing.",
    )
    not_applicable_candidate: int = Field(0, description="The same, in the candidate.")
    most_regressed: list[SideBySide] = Field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return self.model_dump(exclude={"key", "most_regressed"})

    def regressed_by_more_than(self, delta: float) -> bool:
        """The mean dropped by more than ``delta`` and the CI excludes 0."""
        return (
            self.mean_diff is not None
            and self.mean_diff < -delta
            and self.ci_high is not None
            and self.ci_high < 0
        )


class Comparison(BaseModel):
    """Two runs compared, per metric key (:func:`compare`'s result; ``as_json()`` is what
    ``answer-metrics compare --json`` writes).

    Attributes:
        metrics: per metric key, its ``MetricComparison`` (mean difference, CI, p-value).
        only_baseline: ids in the baseline run only.
        only_candidate: ids in the candidate run only.
        other_inputs: ids whose question or reference differ between the runs (paired by
            id, but perhaps not the same sample).

    Example:
        >>> result = compare(baseline_rows, candidate_rows)
        >>> result.metrics["faithfulness"].mean_diff, result.only_baseline
        (0.5, [])
    """

    metrics: dict[str, MetricComparison] = Field(default_factory=dict)
    only_baseline: list[str] = Field(default_factory=list, description="Ids in baseline only.")
    only_candidate: list[str] = Field(default_factory=list, description="Ids in candidate only.")
    other_inputs: list[str] = Field(
        default_factory=list,
        description="Ids whose question or reference differ between the runs: paired by id, "
        "but perhaps not the same sample.",
    )

    def as_json(self) -> dict[str, Any]:
        return {key: metric.as_json() for key, metric in self.metrics.items()}


def sign_flip_p_value(
    diffs: Iterable[float], *, permutations: int = PERMUTATIONS, seed: int = 0
) -> float | None:
    """Two-sided p-value of a zero mean difference: how often flipping the signs of the
    paired differences gives a mean at least as far from 0 as the observed one. Exact (every
    flip) for up to :data:`EXACT_UP_TO` non-zero differences, else Monte Carlo with the
    observed assignment counted, ``(hits + 1) / (permutations + 1)``."""
    values = np.asarray([d for d in diffs if abs(d) > TOLERANCE], dtype=np.float64)
    if len(values) == 0:
        return 1.0
    observed = abs(values.sum()) - TOLERANCE
    if len(values) <= EXACT_UP_TO:
        signs = np.asarray(list(itertools.product((1.0, -1.0), repeat=len(values))))
        return float(np.mean(np.abs(signs @ values) >= observed))
    rng = np.random.default_rng(seed)
    hits = 0
    # At most 1000 flips at once, fewer for long runs: the signs drawn are the same
    # whatever the chunk (one stream, drawn row by row), the memory is not (100k pairs:
    # 1000 rows of signs would be 0.8 GB).
    rows = max(1, min(1000, _SIGNS_PER_CHUNK // len(values)))
    for start in range(0, permutations, rows):
        size = min(rows, permutations - start)
        signs = rng.choice((1.0, -1.0), size=(size, len(values)))
        hits += int(np.sum(np.abs(signs @ values) >= observed))
    return (hits + 1) / (permutations + 1)


def _as_dict(row: Any) -> dict[str, Any]:
    if isinstance(row, Mapping):
        return dict(row)
    dump = getattr(row, "model_dump", None)
    if dump is None:
        raise TypeError(f"a row must be a record or a dict, got {type(row).__name__}")
    return dict(dump())


def _by_id(rows: Iterable[Any]) -> dict[str, dict[str, Any]]:
    # The last row of an id wins, as in an --out file.
    return {str(row["id"]): row for row in map(_as_dict, rows)}


def _entry(row: Mapping[str, Any] | None, key: str) -> Mapping[str, Any] | None:
    if row is None:
        return None
    entry = (row.get("metrics") or {}).get(key)
    return _as_dict(entry) if entry is not None else None


def _metric_keys(row: Mapping[str, Any] | None) -> Iterable[str]:
    return (row.get("metrics") or {}) if row is not None else ()


def _other_inputs(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Paired by id, but the question or the reference differ: perhaps not the same sample."""
    return any(old.get(f) != new.get(f) for f in ("user_input", "reference"))


def _not_applicable(entry: Mapping[str, Any]) -> bool:
    return not entry.get("error") and entry.get("not_applicable") is not None


def _score(entry: Mapping[str, Any] | None) -> float | None:
    if entry is None or entry.get("error") or entry.get("score") is None:
        return None
    score = float(entry["score"])
    return score if math.isfinite(score) else None


def compare(baseline_rows: Iterable[Any], candidate_rows: Iterable[Any]) -> Comparison:
    """Compare two runs' records, paired by id, metric by metric.

    Args:
        baseline_rows: the first run's records: the lines of an ``--out`` file, or dicts
            with ``id``, ``response`` and ``metrics`` (``{key: {score, reason, error}}``).
        candidate_rows: the second run's, in the same form.

    Returns:
        Per metric the paired mean difference (candidate - baseline) with its bootstrap
        CI and permutation p-value, the samples improved and regressed; ids in one run
        only, and failed pairs, counted apart.

    Raises:
        TypeError: a row that is neither a record nor a dict.
        KeyError: a row without an ``id``.

    Example:
        >>> compare(baseline_rows, candidate_rows).metrics["faithfulness"].p_value
        0.5
    """
    return compare_by_id(_by_id(baseline_rows), _by_id(candidate_rows))


def compare_by_id(baseline: Mapping[str, Any], candidate: Mapping[str, Any]) -> Comparison:
    """:func:`compare` of two runs' rows looked up by id (a row as :func:`compare` takes it).

    Each row is looked up once, in one pass over the ids (the baseline's, then the
    candidate's others), and the few most regressed again at the end; what is kept between
    is each paired score, never a row. So a mapping that reads each row from its file when
    it is looked up (``answer-metrics compare``'s) compares runs of any length.

    Example:
        >>> compare_by_id({"q1": old_row}, {"q1": new_row}).metrics["faithfulness"].mean_diff
        0.5
    """
    tallies: dict[str, _Tally] = {}
    other_inputs: list[str] = []
    for row_id in dict.fromkeys(itertools.chain(baseline, candidate)):
        old_row, new_row = baseline.get(row_id), candidate.get(row_id)
        old = _as_dict(old_row) if old_row is not None else None
        new = _as_dict(new_row) if new_row is not None else None
        if old is not None and new is not None and _other_inputs(old, new):
            other_inputs.append(row_id)
        for key in {*_metric_keys(old), *_metric_keys(new)}:
            tallies.setdefault(key, _Tally()).add(row_id, _entry(old, key), _entry(new, key))
    result = Comparison(
        only_baseline=[i for i in baseline if i not in candidate],
        only_candidate=[i for i in candidate if i not in baseline],
        other_inputs=other_inputs,
    )
    for key in sorted(tallies):
        result.metrics[key] = _compare_metric(key, tallies[key], baseline, candidate)
    return result


class _Tally:
    """One metric's pairs as the pass meets them: their ids and both scores (numbers
    only), and the samples left out of the statistics, counted."""

    __slots__ = ("after", "before", "errors", "ids", "not_applicable", "unpaired")

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.before, self.after = array("d"), array("d")
        self.unpaired = self.errors = 0
        self.not_applicable = {"baseline": 0, "candidate": 0}

    def add(
        self, row_id: str, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None
    ) -> None:
        if old is None and new is None:
            return
        if old is None or new is None:
            self.unpaired += 1
            return
        first, second = _score(old), _score(new)
        if first is None or second is None:
            if (first is not None or _not_applicable(old)) and (
                second is not None or _not_applicable(new)
            ):  # no score on a side because the metric does not apply there: not an error
                self.not_applicable["baseline"] += _not_applicable(old)
                self.not_applicable["candidate"] += _not_applicable(new)
            else:
                self.errors += 1
            return
        self.ids.append(row_id)
        self.before.append(first)
        self.after.append(second)


def _compare_metric(
    key: str, tally: _Tally, baseline: Mapping[str, Any], candidate: Mapping[str, Any]
) -> MetricComparison:
    comparison = MetricComparison(
        key=key,
        n_paired=len(tally.ids),
        unpaired=tally.unpaired,
        errors=tally.errors,
        not_applicable_baseline=tally.not_applicable["baseline"],
        not_applicable_candidate=tally.not_applicable["candidate"],
    )
    if not tally.ids:
        return comparison
    befores, afters = tally.before.tolist(), tally.after.tolist()
    diffs = [after - before for before, after in zip(befores, afters)]
    interval = bootstrap_ci(diffs)
    comparison.mean_baseline = float(np.mean(befores))
    comparison.mean_candidate = float(np.mean(afters))
    comparison.mean_diff = float(np.mean(diffs))
    comparison.ci_low, comparison.ci_high = interval if interval else (None, None)
    comparison.p_value = sign_flip_p_value(diffs)
    comparison.improved = sum(d > TOLERANCE for d in diffs)
    comparison.regressed = sum(d < -TOLERANCE for d in diffs)
    comparison.unchanged = len(diffs) - comparison.improved - comparison.regressed
    worst = sorted((i for i, d in enumerate(diffs) if d < -TOLERANCE), key=diffs.__getitem__)
    for index in worst[:WORST]:
        row_id = tally.ids[index]
        base_row, cand_row = _as_dict(baseline[row_id]), _as_dict(candidate[row_id])
        base_entry, cand_entry = _entry(base_row, key) or {}, _entry(cand_row, key) or {}
        comparison.most_regressed.append(
            SideBySide(
                id=row_id,
                user_input=cand_row.get("user_input"),
                baseline_score=befores[index],
                candidate_score=afters[index],
                diff=diffs[index],
                baseline_response=base_row.get("response"),
                candidate_response=cand_row.get("response"),
                baseline_reason=str(base_entry.get("reason") or ""),
                candidate_reason=str(cand_entry.get("reason") or ""),
            )
        )
    return comparison
