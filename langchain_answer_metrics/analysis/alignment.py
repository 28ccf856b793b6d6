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

import os
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from langchain_answer_metrics.analysis.aligned_metric import AlignedMetric, FittedOn
from langchain_answer_metrics.analysis.alignment_examples import LabelledRow, check_alignable
from langchain_answer_metrics.analysis.alignment_fit import (
    DEFAULT_MIN_WEIGHT,
    Fit,
    splits_of,
)
from langchain_answer_metrics.analysis.alignment_gain import Gain, measured_gain
from langchain_answer_metrics.analysis.alignment_rows import (
    LabelFields,
    checked_rows,
    fingerprint,
    labelled_rows,
)
from langchain_answer_metrics.analysis.alignment_run import (
    AlignmentBudget,
    AlignmentStopped,
    Fitting,
    HeldOut,
    score_before,
    score_held_out,
)
from langchain_answer_metrics.analysis.calibration import DEFAULT_THRESHOLD, label_type
from langchain_answer_metrics.core.prices import PriceTable
from langchain_answer_metrics.judging.judges import as_embedders
from langchain_answer_metrics.judging.limits import DEFAULT_MAX_CONCURRENCY
from langchain_answer_metrics.metrics.base import AnswerMetric, JudgedMetric


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
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
    on_progress: Callable[[str], None] | None = None,
    checkpoint: str | os.PathLike[str] | None = None,
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
            ``"similar"``: of a pool of disagreements per step, the ``examples_per_step``
            nearest each sample by ``embeddings`` (see ``SimilarExamples``).
        embeddings: the embedding model for ``select="similar"``.
        weights: fit per-judge weights (a panel); judges at or below ``min_weight`` go.
        threshold: fit the pass threshold (pass/fail labels).
        min_weight: the weight (relative to the best judge's) at or below which a judge goes.
        seed: for the splits, the order of ties and the bootstrap.
        max_cost: USD not to go past: refused before any request if the estimate's low
            end is past it; otherwise the runs stop before a sample that would pass it.
        prices: ``{label or model id: Price}`` (needed for models the built-in table lacks).
        max_concurrency: model requests in flight at most.
        on_progress: called with a line at each stage (the estimate first, then each run).
        checkpoint: a JSONL file keeping each score as it arrives, to resume (docs/align.md).

    Returns:
        An :class:`AlignmentResult`: the aligned metric, its file form, the fit, the gain.

    Raises:
        ValueError: a bad label, option or row (naming it), before any request.
        InvalidSampleError: a row lacks a field the metric needs, before any request.
        AlignmentStopped: the budget stopped a run (``.spent`` says what was spent).

    Example:
        >>> align(Faithfulness(llm=judge), rows, label_field="human", folds=4).gain.finding
        'improved'
    """
    metric, similar = _checked_options(metric, select, embeddings, examples_per_step)
    fields = LabelFields(label_field, explanation_field, claim_labels_field)
    rows = checked_rows(metric, labelled, fields)
    fitting = Fitting(
        kind=label_type(row.label for row in rows),
        per_step=examples_per_step,
        weights=weights,
        threshold=threshold,
        min_weight=min_weight,
        seed=seed,
        similar=similar,
    )
    budget = AlignmentBudget(max_cost, prices, max_concurrency, on_progress, checkpoint)
    splits = splits_of(rows, folds, holdout, seed)
    estimate = score_before(metric, rows, fitting, budget)
    held_out = score_held_out(metric, splits, fitting, budget)
    return _result(
        metric, rows, fields, fitting, held_out, estimate, budget, hold_out=holdout is not None
    )


def _checked_options(
    metric: AnswerMetric, select: str, embeddings: Any, examples_per_step: int
) -> tuple[JudgedMetric, Any]:
    """The metric and the options, refused before any request (a ValueError naming the
    option); the metric, and the embedding models of ``select="similar"``."""
    check_alignable(metric)
    assert isinstance(metric, JudgedMetric)  # every alignable metric is judged
    if select not in ("disagreements", "similar"):
        raise ValueError(f"align: select must be 'disagreements' or 'similar', got {select!r}")
    if (select == "similar") != (embeddings is not None):
        raise ValueError(
            "align: select='similar' takes an embedding model (embeddings=), and only it does"
        )
    if examples_per_step < 0:
        raise ValueError(f"align: examples_per_step must be >= 0, got {examples_per_step}")
    return metric, as_embedders(embeddings) if embeddings is not None else None


def _result(
    metric: JudgedMetric,
    rows: Sequence[LabelledRow],
    fields: LabelFields,
    fitting: Fitting,
    held_out: HeldOut,
    estimate: dict[str, Any],
    budget: AlignmentBudget,
    *,
    hold_out: bool,
) -> AlignmentResult:
    """The gain on the held-out rows, the final fit (every row for k folds, the training
    rows of a hold-out: no request), and its file form."""
    cut = metric.threshold if metric.threshold is not None else DEFAULT_THRESHOLD
    gain = measured_gain(
        held_out.before,
        held_out.after,
        held_out.labels,
        kind=fitting.kind,
        before_threshold=cut,
        after_threshold=held_out.cuts,
        seed=fitting.seed,
    )
    final = held_out.fits[0] if hold_out else fitting.fit(metric, rows)
    fitted_rows = held_out.splits[0][0] if hold_out else rows
    fitted_on = FittedOn(
        rows=len(fitted_rows),
        fingerprint=fingerprint(fitted_rows),
        label_field=fields.label,
        label_type=fitting.kind,
    )
    aligned = AlignedMetric.of(
        final.metric,
        fitted_on=fitted_on,
        dropped=[label for label, judge in final.judges.items() if judge.weight == 0],
        gain={"finding": gain.finding, "summary": gain.summary()},
    )
    return AlignmentResult(
        metric=final.metric,
        aligned=aligned,
        fit=final,
        gain=gain,
        split="hold-out" if hold_out else f"{len(held_out.splits)}-fold",
        estimate=estimate,
        spent=budget.spent(),
        left_out=len(rows) - len(held_out.before),
    )


__all__ = ["AlignmentResult", "AlignmentStopped", "Fit", "align", "labelled_rows"]
