"""Two runs of the same dataset compared by a judge's preference, pair by pair.

    >>> pairs = pairs_to_judge(baseline_rows, candidate_rows)   # two --out files' records
    >>> outcomes = [pairwise.invoke(pair.sample) for pair in pairs.pairs]
    >>> report = pairwise_report(pairs, outcomes)
    >>> report.candidate_wins, report.win_rate, (report.ci_low, report.ci_high)

Samples are paired by id; each pair is judged with the baseline's response as ``A`` and
the candidate's as ``B`` (the metric asks in both orders, so which is "first" does not
matter). The report counts, from the candidate's side, its wins, losses and ties; its
win rate is the mean of its preference scores (``1 - score``: a win 1, a tie 0.5, a
loss 0, a split panel in between) with a paired bootstrap 95% CI
(:func:`langchain_answer_metrics.run.summary.bootstrap_ci`); per judge, the share of its
pairs that were position-biased ties; and the pairs where the judges' preference goes
against the two runs' score difference on a metric both files carry. Ids in one run
only, pairs without a response on a side, pairs the judges failed on and pairs a run
stopped before are counted, never silently dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from langchain_answer_metrics.analysis.comparison import (
    TOLERANCE,
    _as_dict,
    _by_id,
    _entry,
    _score,
)
from langchain_answer_metrics.core.result import MetricResult
from langchain_answer_metrics.metrics.pairwise import PairSample, PairwisePreferenceDetails
from langchain_answer_metrics.run.summary import bootstrap_ci

Side = Literal["baseline", "candidate", "tie"]
SHOWN = 10
"""How many disagreeing pairs a report lists at most."""


class PairToJudge(BaseModel):
    """One id in both runs: the pair to judge, and each run's metric scores."""

    model_config = ConfigDict(frozen=True)

    id: str
    sample: PairSample
    baseline_scores: dict[str, float] = Field(default_factory=dict)
    candidate_scores: dict[str, float] = Field(default_factory=dict)


class PairsToJudge(BaseModel):
    """The pairs of two runs, and what could not be paired."""

    pairs: list[PairToJudge] = Field(default_factory=list)
    unpaired: int = Field(0, description="Ids in one run only.")
    no_response: list[str] = Field(
        default_factory=list, description="Ids in both runs without a response in one."
    )


class Disagreement(BaseModel):
    """A pair where the judges prefer one run but a metric's scores favour the other."""

    id: str
    preferred: Side
    metric: str
    baseline_score: float
    candidate_score: float


class PairwiseReport(BaseModel):
    """The candidate against the baseline, as judged pair by pair (``as_json()``: what
    ``answer-metrics compare --judge pairwise --json`` writes under the metric's key).

    Attributes:
        judged: pairs with a preference.
        candidate_wins: pairs where the candidate's response is preferred.
        candidate_losses: pairs where the baseline's response is preferred.
        ties: pairs scored 0.5 (a tie, or position-biased verdicts).
        win_rate: the candidate's mean preference score (a tie counts half); ``ci_low``,
            ``ci_high``: its bootstrap 95% CI (None with fewer than two pairs).
        position_bias: per judge, the share of the pairs it judged where its two orders
            disagreed.
        disagreements: pairs whose preference goes against a metric's score difference.
        errors: pairs every judge failed on; ``not_run``: pairs a limit stopped before;
            ``unpaired`` and ``no_response``: as in :class:`PairsToJudge`.
    """

    judged: int = 0
    candidate_wins: int = 0
    candidate_losses: int = 0
    ties: int = 0
    win_rate: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    position_bias: dict[str, float] = Field(default_factory=dict)
    disagreements: list[Disagreement] = Field(default_factory=list)
    errors: int = 0
    not_run: int = 0
    unpaired: int = 0
    no_response: int = 0

    def as_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


def _text(row: Mapping[str, Any], field: str) -> str | None:
    value = row.get(field)
    return value if isinstance(value, str) and value.strip() else None


def _scores(row: Mapping[str, Any]) -> dict[str, float]:
    scores = {key: _score(_entry(row, key)) for key in row.get("metrics") or {}}
    return {key: score for key, score in scores.items() if score is not None}


def pairs_to_judge(baseline_rows: Iterable[Any], candidate_rows: Iterable[Any]) -> PairsToJudge:
    """The ids both runs hold, as pairs to judge: the baseline's response is ``A``, the
    candidate's ``B``; the question and reference are the baseline's.

    Args:
        baseline_rows: the first run's records (an ``--out`` file's, or dicts with ``id``,
            ``user_input``, ``response``, ``reference`` and ``metrics``).
        candidate_rows: the second run's, in the same form.

    Raises:
        TypeError: a row that is neither a record nor a dict.
        KeyError: a row without an ``id``.
    """
    return pairs_by_id(_by_id(baseline_rows), _by_id(candidate_rows))


def pairs_by_id(baseline: Mapping[str, Any], candidate: Mapping[str, Any]) -> PairsToJudge:
    """:func:`pairs_to_judge` of two runs' rows looked up by id, each row once (a mapping
    reading each from its file keeps only the pairs' texts and scores).

    Example:
        >>> pairs_by_id({"q1": old_row}, {"q1": new_row}).pairs[0].sample.response_b
        'The Eiffel Tower stands in Paris.'
    """
    result = PairsToJudge(unpaired=len(baseline.keys() ^ candidate.keys()))
    for row_id in baseline:
        if row_id not in candidate:
            continue
        old, new = _as_dict(baseline[row_id]), _as_dict(candidate[row_id])
        a, b = _text(old, "response"), _text(new, "response")
        if a is None or b is None:
            result.no_response.append(row_id)
            continue
        sample = PairSample(
            user_input=_text(old, "user_input"),
            reference=_text(old, "reference"),
            response_a=a,
            response_b=b,
        )
        result.pairs.append(
            PairToJudge(
                id=row_id,
                sample=sample,
                baseline_scores=_scores(old),
                candidate_scores=_scores(new),
            )
        )
    return result


def _side(score: float) -> Side:
    if score > 0.5 + TOLERANCE:
        return "baseline"
    return "candidate" if score < 0.5 - TOLERANCE else "tie"


def _against(pair: PairToJudge, preferred: Side) -> list[Disagreement]:
    if preferred == "tie":
        return []
    found = []
    for key in sorted(pair.baseline_scores.keys() & pair.candidate_scores.keys()):
        old, new = pair.baseline_scores[key], pair.candidate_scores[key]
        diff = new - old
        favoured = "candidate" if diff > TOLERANCE else "baseline" if diff < -TOLERANCE else None
        if favoured is not None and favoured != preferred:
            found.append(
                Disagreement(
                    id=pair.id,
                    preferred=preferred,
                    metric=key,
                    baseline_score=old,
                    candidate_score=new,
                )
            )
    return found


def pairwise_report(pairs: PairsToJudge, outcomes: Sequence[object | None]) -> PairwiseReport:
    """Summarise ``outcomes``, one per pair of ``pairs.pairs`` in order: the metric's
    result, its error (an exception or the runner's ``MetricError``), or None for a pair
    a limit stopped before."""
    if len(outcomes) != len(pairs.pairs):
        raise ValueError(f"{len(outcomes)} outcomes for {len(pairs.pairs)} pairs")
    report = PairwiseReport(unpaired=pairs.unpaired, no_response=len(pairs.no_response))
    candidate_scores: list[float] = []
    biased: dict[str, list[bool]] = {}
    for pair, outcome in zip(pairs.pairs, outcomes):
        if outcome is None:
            report.not_run += 1
            continue
        if not isinstance(outcome, MetricResult) or outcome.score is None:
            report.errors += 1
            continue
        preferred = _side(outcome.score)
        candidate_scores.append(1.0 - outcome.score)
        report.candidate_wins += preferred == "candidate"
        report.candidate_losses += preferred == "baseline"
        report.ties += preferred == "tie"
        details = outcome.details
        if isinstance(details, PairwisePreferenceDetails):
            for label, flag in details.position_bias.items():
                biased.setdefault(label, []).append(flag)
        report.disagreements.extend(_against(pair, preferred))
    report.judged = len(candidate_scores)
    if candidate_scores:
        report.win_rate = sum(candidate_scores) / len(candidate_scores)
        interval = bootstrap_ci(candidate_scores)
        report.ci_low, report.ci_high = interval if interval else (None, None)
    report.position_bias = {label: sum(flags) / len(flags) for label, flags in biased.items()}
    return report


__all__ = [
    "Disagreement",
    "PairToJudge",
    "PairsToJudge",
    "PairwiseReport",
    "pairs_by_id",
    "pairs_to_judge",
    "pairwise_report",
]
