"""Few-shot examples made from labelled rows where the judges disagree with the humans.

The human label (and explanation, where given) becomes the example's verdict (and reason),
in the ``examples={step: [{"input": {...}, "output": {...}}]}`` format of the steps the
metric runs (see :mod:`~langchain_answer_metrics.judging.prompt_set`):

- ``judge_aspect`` (AspectCritic): the row's response (and question) with the human's
  PASS/FAIL (a score label: PASS at or above the threshold).
- ``verify_claims`` (Faithfulness, FactualCorrectness): a sample-level label does not say
  which claim is wrong, so a claim example is made only where the label pins every
  claim's verdict down: claim-level labels in the row (``claim_labels``: a list of
  ``{"claim", "verdict", "reason"?}``, checked against the metric's sources), or the
  judge's own claims with their verdicts corrected toward a label at an end of the scale.
  A top label (pass, 1.0) reads as "every claim holds": each claim becomes "supported". A
  bottom label (fail, 0.0) fixes a verdict only where the response made one claim (under
  FactualCorrectness, precision or recall mode; F1 cannot say which side failed). Rows
  with labels in between, or with several claims and a fail label, give no claim example.
- ``decompose_claims`` gets none: a label says nothing about how to split a text.
- CustomJudge's step (``judge_pass_fail``, ``judge_scale``, ``judge_category``,
  ``judge_continuous``): the sample fields its prompt shows, with the verdict nearest the
  label: for a score label, the one whose score is nearest it (a continuous kind: the
  score itself); for pass/fail, of the verdicts on the label's side of the threshold, the
  one nearest the judges' own score (the smallest correction). ``higher_is_better=False``
  is read through: the label is on the reported score.
- the agent steps (AgentGoalAccuracy's ``judge_agent_goal``, TrajectoryJudge's
  ``judge_trajectory`` or ``judge_trajectory_scale``): the trajectory (shortened: an
  example goes with every request) with the label's verdict, made by the metric
  (``labelled_example``); a scale's level nearest a score label; no faulted step, which
  a sample-level label does not name.

Example:
    >>> chosen = choose_examples(metric, training_rows, per_step=4, threshold=0.5, seed=0)
    >>> chosen.examples["judge_aspect"][0]["output"]["verdict"]
    'PASS'
"""

from __future__ import annotations

import random
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_answer_metrics.core.result import MetricResult
from langchain_answer_metrics.core.sample import Sample
from langchain_answer_metrics.metrics.aspect_critic import AspectCritic
from langchain_answer_metrics.metrics.base import AnswerMetric, JudgedMetric
from langchain_answer_metrics.metrics.custom_judge import CustomJudge
from langchain_answer_metrics.metrics.factual_correctness import FactualCorrectness
from langchain_answer_metrics.metrics.faithfulness import Faithfulness
from langchain_answer_metrics.metrics.judged_agents import JudgedAgentMetric

ALIGNABLE = (AspectCritic, CustomJudge, Faithfulness, FactualCorrectness, JudgedAgentMetric)
CLAIM_VERDICTS = ("supported", "contradicted", "neutral")


@dataclass
class LabelledRow:
    """One labelled sample and what the metric (before alignment) made of it.

    Example:
        >>> LabelledRow(id="q1", sample=Sample(response="Paris."), label=True).passes(0.5)
        True
    """

    id: str
    sample: Sample
    label: float | bool
    explanation: str = ""
    claim_labels: Sequence[Mapping[str, Any]] = ()
    result: MetricResult | None = None  # None: the metric failed on it

    def passes(self, threshold: float) -> bool:
        return self.label if isinstance(self.label, bool) else self.label >= threshold


@dataclass
class ChosenExamples:
    """Per step, the examples chosen (``examples=`` format) and the rows they came from.

    Example:
        >>> chosen.rows["judge_aspect"]
        ['Peru-para', 'Cuba-para']
    """

    examples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    rows: dict[str, list[str]] = field(default_factory=dict)

    def add(self, step: str, example: dict[str, Any], row_id: str) -> None:
        self.examples.setdefault(step, []).append(example)
        self.rows.setdefault(step, []).append(row_id)


def check_alignable(metric: AnswerMetric) -> None:
    """Refuse, before any request, a metric whose steps align cannot make examples for."""
    if not isinstance(metric, ALIGNABLE):
        names = ", ".join(kind.__name__ for kind in ALIGNABLE)
        raise ValueError(
            f"align: {type(metric).__name__} ({metric.key}) cannot be aligned; "
            f"align makes examples for {names}"
        )


def _gap(row: LabelledRow, score: float | None) -> float:
    return 1.0 if score is None else abs(float(row.label) - score)


def _ordered(rows: Sequence[LabelledRow], threshold: float, seed: int) -> list[LabelledRow]:
    """Worst disagreements first, alternating between passing and failing labels (a
    set of examples of one kind would teach the judge a bias, not the criterion)."""
    scored = [row for row in rows if row.result is not None and row.result.score is not None]
    wrong = [
        row
        for row in scored
        if (isinstance(row.label, bool) and (row.result.score >= threshold) != row.label)  # type: ignore[union-attr,operator]
        or (not isinstance(row.label, bool) and _gap(row, row.result.score) >= 0.25)  # type: ignore[union-attr]
    ]
    random.Random(seed).shuffle(wrong)  # ties broken the same way for the same seed
    wrong.sort(key=lambda row: -_gap(row, row.result.score))  # type: ignore[union-attr]
    groups = [
        [row for row in wrong if row.passes(threshold)],
        [row for row in wrong if not row.passes(threshold)],
    ]
    merged: list[LabelledRow] = []
    for pair in zip(*groups):
        merged += pair
    longest = max(groups, key=len)
    return merged + longest[min(map(len, groups)) :]


def _aspect_example(metric: AspectCritic, row: LabelledRow, threshold: float) -> dict[str, Any]:
    verdict = "PASS" if row.passes(threshold) else "FAIL"
    given: dict[str, Any] = {"criterion": metric.criterion, "response": row.sample.response}
    if row.sample.user_input:
        given["question"] = row.sample.user_input
    reason = row.explanation or f"A human reviewer judged this response {verdict}."
    return {"input": given, "output": {"reason": reason, "verdict": verdict}}


def _custom_example(
    metric: CustomJudge, row: LabelledRow, threshold: float
) -> tuple[str, dict[str, Any]]:
    """The CustomJudge step's example from ``row`` (module docs)."""
    output, best = metric.output, metric.higher_is_better
    reason = row.explanation or "A human reviewer's verdict."
    target = float(row.label)
    if output.kind == "continuous":
        return output.step, {
            "input": _shown(metric, row),
            "output": {"reason": reason, "score": target if best else 1 - target},
        }

    def reported(verdict: str | int) -> float:
        judged = output.judged_score(verdict)
        return judged if best else 1.0 - judged

    choices = list(output.choices())
    if isinstance(row.label, bool):
        current = row.result.score if row.result and row.result.score is not None else target
        side = [v for v in choices if (reported(v) >= threshold) == row.label] or choices
        verdict = min(side, key=lambda v: abs(reported(v) - current))
    else:
        verdict = min(choices, key=lambda v: abs(reported(v) - target))
    return output.step, {
        "input": _shown(metric, row),
        "output": {"reason": reason, "verdict": verdict},
    }


def _shown(metric: CustomJudge, row: LabelledRow) -> dict[str, Any]:
    """The sample fields the judge's prompt shows, as an example's input."""
    fields = (*metric._shown_fields(), "user_input")
    template = metric.prompts[metric.output.step]
    used = set(template.input_variables) | set(template.optional_variables)
    return {
        name: value
        for name in dict.fromkeys(fields)
        if (value := getattr(row.sample, name)) is not None
        and (name != "user_input" or {"question", "user_input"} & used)
    }


def _claim_sides(metric: JudgedMetric, sample: Sample) -> dict[str, dict[str, Any]]:
    """Per claim side the metric checks, what its claims are verified against."""
    if isinstance(metric, Faithfulness):
        return {"response": {"source": list(sample.retrieved_contexts or [])}}
    assert isinstance(metric, FactualCorrectness)
    question = {"question": sample.user_input} if sample.user_input else {}
    sides = {
        "response": {"source": sample.reference, **question},
        "reference": {"source": sample.response, **question},
    }
    keep = {"f1": ("response", "reference"), "precision": ("response",), "recall": ("reference",)}
    return {side: sides[side] for side in keep[metric.mode]}


def _fixed_verdict(metric: JudgedMetric, row: LabelledRow, side: str, claims: int) -> str | None:
    """The verdict the label pins every claim of ``side`` to, if it does (module docs)."""
    top = row.label is True or (not isinstance(row.label, bool) and row.label >= 1.0)
    bottom = row.label is False or (not isinstance(row.label, bool) and row.label <= 0.0)
    if top:
        return "supported"
    one_sided = isinstance(metric, Faithfulness) or (
        isinstance(metric, FactualCorrectness)
        and (metric.mode, side) in {("precision", "response"), ("recall", "reference")}
    )
    return "neutral" if bottom and one_sided and claims == 1 else None


def _claim_examples(
    metric: JudgedMetric, row: LabelledRow, judges: Collection[str] | None
) -> list[dict[str, Any]]:
    """verify_claims examples from ``row``: its claim labels, else the first judge's
    claims that the label corrects (module docs)."""
    sides = _claim_sides(metric, row.sample)
    if row.claim_labels:
        claims = [str(item["claim"]) for item in row.claim_labels]
        verdicts = [
            {
                "index": i,
                "reason": str(
                    item.get("reason")
                    or row.explanation
                    or f"A human reviewer judged it {item['verdict']}."
                ),
                "evidence": "",
                "verdict": str(item["verdict"]).strip().lower(),
            }
            for i, item in enumerate(row.claim_labels, 1)
        ]
        side = next(iter(sides))
        return [{"input": {"claims": claims, **sides[side]}, "output": {"verdicts": verdicts}}]
    assert row.result is not None
    examples = []
    for label, model_details in (getattr(row.result.details, "models", None) or {}).items():
        if judges is not None and label not in judges:
            continue
        for side, checked in model_details.claims_by_side().items():
            fixed = _fixed_verdict(metric, row, side, len(checked))
            if side not in sides or not checked or fixed is None:
                continue
            if all((c.verdict == "supported") == (fixed == "supported") for c in checked):
                continue  # this judge got the side right: nothing to teach
            reason = row.explanation or f"A human reviewer judged the claim {fixed}."
            verdicts = [
                {"index": i, "reason": reason, "evidence": "", "verdict": fixed}
                for i in range(1, len(checked) + 1)
            ]
            examples.append(
                {
                    "input": {"claims": [c.claim for c in checked], **sides[side]},
                    "output": {"verdicts": verdicts},
                }
            )
        if examples:
            return examples  # one judge's claims: the panel's would repeat each other
    return []


def check_claim_labels(metric: AnswerMetric, rows: Sequence[LabelledRow]) -> None:
    """Refuse claim labels that are not a list of ``{"claim", "verdict"}`` with a known
    verdict, naming the row, before any request."""
    for row in rows:
        if not row.claim_labels:
            continue
        if not isinstance(metric, (Faithfulness, FactualCorrectness)):
            raise ValueError(
                f"align: row {row.id}: claim labels need a claim metric, "
                f"not {type(metric).__name__} ({metric.key})"
            )
        for item in row.claim_labels:
            fits = isinstance(item, Mapping) and "claim" in item
            verdict = str(item.get("verdict", "")).strip().lower() if fits else ""
            if verdict not in CLAIM_VERDICTS:
                raise ValueError(
                    f"align: row {row.id}: each claim label is {{'claim': ..., 'verdict': "
                    f"one of {', '.join(CLAIM_VERDICTS)}}}, got {item!r} ({metric.key})"
                )


def choose_examples(
    metric: JudgedMetric,
    rows: Sequence[LabelledRow],
    *,
    per_step: int,
    threshold: float,
    judges: Collection[str] | None = None,
    seed: int = 0,
) -> ChosenExamples:
    """Up to ``per_step`` new examples per step, from the training ``rows`` where the
    metric's score disagrees with the label most (and rows with claim labels first);
    claim examples from the claims of ``judges`` (labels) only, when given.

    Example:
        >>> choose_examples(critic, rows, per_step=2, threshold=0.5).examples["judge_aspect"]
        [{'input': {...}, 'output': {'reason': '...', 'verdict': 'PASS'}}, ...]
    """
    chosen = ChosenExamples()
    if per_step <= 0:
        return chosen
    labelled_claims = [row for row in rows if row.claim_labels]
    seen: set[str] = set()
    for row in [*labelled_claims, *_ordered(rows, threshold, seed)]:
        if row.id in seen:
            continue
        seen.add(row.id)
        if isinstance(metric, AspectCritic):
            made = [("judge_aspect", _aspect_example(metric, row, threshold))]
        elif isinstance(metric, CustomJudge):
            made = [_custom_example(metric, row, threshold)]
        elif isinstance(metric, JudgedAgentMetric):
            made = [
                metric.labelled_example(
                    row.sample,
                    passed=row.passes(threshold),
                    label=row.label,
                    reason=row.explanation,
                )
            ]
        else:
            made = [("verify_claims", example) for example in _claim_examples(metric, row, judges)]
        for step, example in made:
            if len(chosen.examples.get(step, [])) < per_step:
                chosen.add(step, example, row.id)
    return chosen
