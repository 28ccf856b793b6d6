"""Align a metric's judges with human labels (:func:`align`), and measure the gain honestly.

The procedure, in order:

1. Check every labelled row (label, fields) before any request; estimate the cost.
2. Score every labelled row once with the metric as it is ("before").
3. Split the rows: k folds (each row held out once), or the user's hold-out. On each
   split's training rows, fit: per-judge weights from each judge's agreement with the
   labels there (Cohen's kappa, or Spearman for score labels; a judge at or below
   ``min_weight`` is dropped), a pass threshold (pass/fail labels: the best Youden's J),
   and few-shot examples from the rows where the (re-weighted) panel disagrees with the
   humans most (:mod:`.alignment_examples`), fixed, or with ``select="similar"`` a pool
   of them, the nearest to each sample chosen at scoring time. Score the held-out rows
   with that metric ("after").
4. Set before against after on the held-out rows only (:mod:`.alignment_gain`): paired
   differences with bootstrap CIs, and a plain finding.
5. The aligned metric returned is fitted on every row (k-fold) or on the training rows
   (a hold-out); its gain is the one measured in 4. No request is made for it.

Weights and the threshold are fitted on the training rows' scores *before* the examples
(scoring them again with the examples would double the cost); the gain in 4 measures the
whole, as it will be used.

    >>> result = align(AspectCritic(llm=judge, criterion="..."), rows, label_field="human")
    >>> result.gain.finding, result.save("aligned.yaml")
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from langchain_answer_metrics.analysis.aligned_metric import AlignedMetric, FittedOn
from langchain_answer_metrics.analysis.alignment_examples import (
    AspectCritic,
    CustomJudge,
    LabelledRow,
    _custom_example,
    check_alignable,
    check_claim_labels,
)
from langchain_answer_metrics.analysis.alignment_fit import (
    DEFAULT_MIN_WEIGHT,
    Fit,
    fit,
    rebuilt,
    splits_of,
)
from langchain_answer_metrics.analysis.alignment_gain import Gain, measured_gain
from langchain_answer_metrics.analysis.alignment_run import (
    AlignmentBudget,
    AlignmentStopped,
    cost_estimate,
)
from langchain_answer_metrics.analysis.calibration import (
    DEFAULT_THRESHOLD,
    label_type,
    parse_label,
)
from langchain_answer_metrics.core.prices import PriceTable
from langchain_answer_metrics.judging.judges import as_embedders
from langchain_answer_metrics.mapping import SampleMapping
from langchain_answer_metrics.metrics.base import AnswerMetric, JudgedMetric
from langchain_answer_metrics.metrics.similar_examples import SimilarExamples


class AlignmentResult(BaseModel):
    """What :func:`align` returns: the aligned metric, what was fitted, and the gain
    measured on held-out rows.

    Attributes:
        metric: the aligned metric, ready to use (``result.metric.invoke(...)``).
        aligned: its file form (:class:`~.aligned_metric.AlignedMetric`).
        fit: what the final fit chose (judges' agreement and weights, threshold, examples).
        gain: before, after, paired difference and CI per statistic; ``gain.finding``.
        split: ``"5-fold"`` or ``"hold-out"``.
        estimate: the cost estimate made before any request (USD low/high, requests).
        spent: what the run cost (USD; None without prices) and its requests.
        left_out: held-out rows without a score before or after (failed, not applicable).
        path: where :meth:`save` wrote it.

    Example:
        >>> result = align(metric, rows, folds=4)
        >>> print(result.summary()); result.save("aligned.yaml")
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    metric: Any
    aligned: AlignedMetric
    fit: Fit
    gain: Gain
    split: str
    estimate: dict[str, Any] = Field(default_factory=dict)
    spent: dict[str, Any] = Field(default_factory=dict)
    left_out: int = 0
    path: str | None = None

    def save(self, path: Any) -> str:
        """Write the aligned metric (YAML or JSON by suffix); returns the path."""
        self.path = str(self.aligned.save(path))
        return self.path

    def cost(self) -> str:
        """The estimate made before any request, then what was spent, in one line."""
        low, high, cost = (
            self.estimate.get("cost_low"),
            self.estimate.get("cost_high"),
            self.spent.get("cost"),
        )
        estimated = "no price" if low is None else f"${low:.4f}-${high or 0:.4f}"
        spent = "no price" if cost is None else f"${cost:.4f}"
        return (
            f"estimated {self.estimate.get('requests', 0)} requests, {estimated}; "
            f"spent {self.spent.get('requests', 0)} requests, {spent}"
        )

    def summary(self) -> str:
        """The finding in one line, then what was fitted."""
        judges = ", ".join(
            f"{label} {'dropped' if fit.weight == 0 else f'weight {fit.weight:.2f}'}"
            for label, fit in self.fit.judges.items()
        )
        examples = ", ".join(f"{len(e)} {step}" for step, e in self.fit.examples.items())
        threshold = "-" if self.fit.threshold is None else f"{self.fit.threshold:.2f}"
        return (
            f"{self.aligned.settings.get('name') or self.aligned.metric}: {self.gain.summary()} "
            f"({self.split}); examples: {examples or 'none'}; judges: {judges}; "
            f"threshold {threshold}"
        )


def _fingerprint(rows: Sequence[LabelledRow]) -> str:
    payload = json.dumps(
        [[row.id, row.sample.model_dump(mode="json"), row.label, row.explanation] for row in rows],
        sort_keys=True,
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _fields(mapping: SampleMapping, metric: AnswerMetric, row: Mapping[str, Any]) -> Any:
    """What ``metric`` reads from ``row``: a Sample; an agent metric, the fields found
    and the agent's own (messages, expected calls), which it reads in any of their forms."""
    if not getattr(metric, "reads_agent_fields", False):
        return mapping.from_row(row, metric=metric.key)
    found = mapping.fields_of(row, metric=metric.key)
    own = getattr(metric, "agent_fields", ())
    found.update({key: row[key] for key in own if key in row and key not in found})
    return found


def labelled_rows(
    metric: AnswerMetric,
    rows: Iterable[Mapping[str, Any]],
    *,
    label_field: str,
    explanation_field: str | None,
    claim_labels_field: str,
) -> list[LabelledRow]:
    """The rows with a label, each checked for ``metric`` (a bad label or field is a
    ValueError naming the row, the field and the metric, before any request).

    Example:
        >>> labelled_rows(critic, rows, label_field="human", explanation_field=None,
        ...               claim_labels_field="claim_labels")[0].label
        True
    """
    mapping = SampleMapping.for_rows()
    kept = []
    for index, row in enumerate(rows):
        row_id = str(row.get("id", index + 1))
        try:
            label = parse_label(row.get(label_field))
        except ValueError as error:
            problem = f"align ({metric.key}): row {row_id}: {label_field}: {error}"
            raise ValueError(problem) from None
        if label is None:
            continue
        sample = metric.check_sample(_fields(mapping, metric, row))
        explanation = row.get(explanation_field) if explanation_field else None
        kept.append(
            LabelledRow(
                id=row_id,
                sample=sample,
                label=label,
                explanation=str(explanation or ""),
                claim_labels=list(row.get(claim_labels_field) or ()),
            )
        )
    return kept


def align(
    metric: AnswerMetric,
    labelled: Iterable[Mapping[str, Any]],
    *,
    label_field: str = "human",
    explanation_field: str | None = None,
    claim_labels_field: str = "claim_labels",
    folds: int = 5,
    holdout: float | Collection[str] | None = None,
    examples_per_step: int = 4,
    select: Literal["disagreements", "similar"] = "disagreements",
    embeddings: Any = None,
    weights: bool = True,
    threshold: bool = True,
    min_weight: float = DEFAULT_MIN_WEIGHT,
    seed: int = 0,
    max_cost: float | None = None,
    prices: PriceTable | None = None,
    max_concurrency: int = 16,
    on_progress: Callable[[str], None] | None = None,
) -> AlignmentResult:
    """Fit ``metric``'s judges to the human labels of ``labelled`` rows, and measure the
    gain on rows the fit never saw (see the module docs for the procedure).

    Args:
        metric: an AspectCritic, Faithfulness or FactualCorrectness (one judge or a panel).
        labelled: dicts with the sample's fields, an optional ``id`` and the label.
        label_field: the label's key: pass/fail or a score in [0, 1] (unlabelled: skipped).
        explanation_field: the key of the humans' explanations, the examples' reasons.
        claim_labels_field: the key of claim-level labels (claim metrics, optional).
        folds: k of the k-fold cross-validation (each row held out once).
        holdout: instead of folds, the rows held out: a fraction, or their ids.
        examples_per_step: new examples per step, at most.
        select: ``"disagreements"``: the ``examples_per_step`` worst disagreements, fixed;
            ``"similar"``: a pool of disagreements per step, of which the
            ``examples_per_step`` nearest each sample (by ``embeddings``) go in its prompt
            (:class:`~langchain_answer_metrics.metrics.similar_examples.SimilarExamples`).
        embeddings: the embedding model for ``select="similar"``.
        weights: fit per-judge weights (a panel); judges at or below ``min_weight`` go.
        threshold: fit the pass threshold (pass/fail labels).
        min_weight: a judge's weight (relative to the best judge's) at or below which it
            is dropped.
        seed: for the splits, the order of ties and the bootstrap.
        max_cost: USD not to go past: refused before any request if the estimate's low
            end is past it; otherwise the runs stop before a sample that would pass it.
        prices: ``{label or model id: Price}`` (needed for models the built-in table lacks).
        max_concurrency: model requests in flight at most.
        on_progress: called with a line at each stage (the estimate first, then each run).

    Returns:
        An :class:`AlignmentResult`: the aligned metric, its file form, the fit, the gain.

    Raises:
        ValueError: a bad label, option or row (naming it), before any request.
        InvalidSampleError: a row lacks a field the metric needs, before any request.
        AlignmentStopped: the budget stopped a run (``.spent`` says what was spent).

    Example:
        >>> result = align(Faithfulness(llm=judge), rows, label_field="human", folds=4)
        >>> result.gain.finding
        'improved'
    """
    check_alignable(metric)
    assert isinstance(metric, JudgedMetric)
    if select not in ("disagreements", "similar"):
        raise ValueError(f"align: select must be 'disagreements' or 'similar', got {select!r}")
    if (select == "similar") != (embeddings is not None):
        raise ValueError(
            "align: select='similar' takes an embedding model (embeddings=), and only it does"
        )
    similar = as_embedders(embeddings) if embeddings is not None else None
    if examples_per_step < 0:
        raise ValueError(f"align: examples_per_step must be >= 0, got {examples_per_step}")
    rows = labelled_rows(
        metric,
        labelled,
        label_field=label_field,
        explanation_field=explanation_field,
        claim_labels_field=claim_labels_field,
    )
    if len(rows) < 4:
        raise ValueError(
            f"align ({metric.key}): {len(rows)} labelled rows in {label_field!r}; "
            "at least 4 are needed (and tens to measure a gain)"
        )
    ids = [row.id for row in rows]
    if len(set(ids)) != len(ids):
        raise ValueError(f"align ({metric.key}): row ids repeat; give each row its own id")
    check_claim_labels(metric, rows)
    # What cannot be saved is refused now, not after the runs have spent.
    AlignedMetric.of(metric, fitted_on=FittedOn(rows=len(rows), fingerprint=""))
    kind = label_type(row.label for row in rows)
    splits = splits_of(rows, folds, holdout, seed)
    budget = AlignmentBudget(
        max_cost=max_cost, prices=prices, max_concurrency=max_concurrency, on_progress=on_progress
    )
    stand_ins = _probe_examples(metric, rows, examples_per_step)
    probe: AnswerMetric = rebuilt(
        metric,
        judges=metric.llm,
        threshold=metric.threshold,
        judge_weights=None,
        new_examples=stand_ins,
    )
    if similar is not None and stand_ins:  # the prompts' size, and the embedding requests
        probe = SimilarExamples(
            metric=metric, pool=stand_ins, embeddings=similar, k=max(1, examples_per_step)
        )
    estimate = cost_estimate([row.sample for row in rows], metric, probe, budget)
    budget.say(f"scoring {len(rows)} labelled rows as the metric is (before)")
    before_results = budget.score(metric, [row.sample for row in rows])
    for row, result in zip(rows, before_results):
        row.result = result
    options = dict(
        kind=kind,
        examples_per_step=examples_per_step,
        weights=weights,
        threshold=threshold,
        min_weight=min_weight,
        seed=seed,
        similar=similar,
    )
    cut = metric.threshold if metric.threshold is not None else DEFAULT_THRESHOLD
    before, after, labels, cuts = [], [], [], []
    fits = []
    for number, (train, test) in enumerate(splits, 1):
        fitted = fit(metric, train, **options)  # type: ignore[arg-type]
        budget.say(
            f"split {number}/{len(splits)}: fitted on {len(train)} rows, scoring "
            f"{len(test)} held-out rows (after)"
        )
        fits.append(fitted)
        results = budget.score(fitted.metric, [row.sample for row in test])
        after_cut = fitted.threshold if fitted.threshold is not None else cut
        for row, result in zip(test, results):
            if (
                row.result is None
                or row.result.score is None
                or result is None
                or result.score is None
            ):
                continue
            before.append(row.result.score)
            after.append(result.score)
            labels.append(row.label)
            cuts.append(after_cut)
    if not before:
        raise ValueError(
            f"align ({metric.key}): no held-out row was scored both before and "
            "after (every one failed or was not applicable)"
        )
    gain = measured_gain(
        before, after, labels, kind=kind, before_threshold=cut, after_threshold=cuts, seed=seed
    )
    final = fits[0] if holdout is not None else fit(metric, rows, **options)  # type: ignore[arg-type]
    fitted_rows = splits[0][0] if holdout is not None else rows
    aligned = AlignedMetric.of(
        final.metric,
        fitted_on=FittedOn(
            rows=len(fitted_rows),
            fingerprint=_fingerprint(fitted_rows),
            label_field=label_field,
            label_type=kind,
        ),
        dropped=[label for label, judge in final.judges.items() if judge.weight == 0],
        gain={"finding": gain.finding, "summary": gain.summary()},
    )
    return AlignmentResult(
        metric=final.metric,
        aligned=aligned,
        fit=final,
        gain=gain,
        split="hold-out" if holdout is not None else f"{len(splits)}-fold",
        estimate=estimate,
        spent=budget.spent(),
        left_out=len(rows) - len(before),
    )


def _probe_examples(
    metric: JudgedMetric, rows: Sequence[LabelledRow], per_step: int
) -> dict[str, list[dict[str, Any]]]:
    """Stand-in examples of the rows' size, for the cost estimate of the "after" runs."""
    picked = rows[:per_step]
    if isinstance(metric, CustomJudge):
        made = [_custom_example(metric, row, DEFAULT_THRESHOLD) for row in picked]
        return {step: [example for _, example in made] for step, _ in made[:1]}
    if isinstance(metric, AspectCritic):
        return {
            "judge_aspect": [
                {
                    "input": {"criterion": metric.criterion, "response": row.sample.response},
                    "output": {"reason": "x" * 40, "verdict": "PASS"},
                }
                for row in picked
            ]
        }
    return {
        "verify_claims": [
            {
                "input": {
                    "claims": [row.sample.response],
                    "source": row.sample.reference or list(row.sample.retrieved_contexts or []),
                },
                "output": {"verdicts": [{"index": 1, "reason": "x" * 40, "verdict": "supported"}]},
            }
            for row in picked
        ]
    }


__all__ = ["AlignmentResult", "AlignmentStopped", "Fit", "align", "labelled_rows"]
