"""A pairwise metric as a LangSmith comparative evaluator: two experiments, one score each.

    >>> pairwise = PairwisePreference(llm=judge)
    >>> langsmith.evaluate(("experiment-a", "experiment-b"),
    ...                    evaluators=[pairwise.as_comparative_evaluator()])

LangSmith calls the evaluator once per example with the two experiments' runs on it
(``(runs, example)``). This face is thin: each run's response, and the example's question
and reference, are found as for the row evaluators (:mod:`langchain_answer_metrics.mapping`;
keyword arguments override single fields), the metric judges the pair (in both orders,
each judge), and its score becomes one score per run: the first run's is the metric's
score (1.0: it is better), the second's its complement; a tie gives 0.5 to each.

A pair the metric cannot judge (a run without a response, every judge failing) gives
both runs ``None`` with the error in the comment, never a made-up score: the comparison
carries on with the other examples.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from langsmith.schemas import Example, Run

from langchain_answer_metrics.adapters.langsmith.evaluators import (
    _mapping,
    _sources,
    error_comment,
)
from langchain_answer_metrics.mapping import FieldSpec, SampleMapping

if TYPE_CHECKING:  # the metric's module imports this one when asked for an evaluator
    from langchain_answer_metrics.metrics.pairwise import PairwisePreference

ComparativeEvaluator = Callable[[Sequence[Run], Example | None], dict[str, Any]]
"""LangSmith's comparative evaluator shape: ``(runs, example) -> {"key", "scores", "comment"}``."""


def comparative_evaluator(
    metric: PairwisePreference, *, mapping: SampleMapping | None = None, **overrides: FieldSpec
) -> ComparativeEvaluator:
    """``metric`` as a function LangSmith's ``evaluate((experiment_a, experiment_b), ...)``
    takes; see the module docstring.

    Args:
        metric: the pairwise metric; its key is the feedback key.
        mapping: where the question, response and reference are (default: common names).
        **overrides: instead of ``mapping``, a field's key or callable (``response="answer"``).

    Raises:
        TypeError: both ``mapping`` and field overrides.

    Example:
        >>> compare = comparative_evaluator(PairwisePreference(llm=judge), response="answer")
        >>> compare([run_a, run_b], example)
        {'key': 'pairwise_preference', 'scores': {run_a.id: 1.0, run_b.id: 0.0}, 'comment': ...}
    """
    fields = _mapping(mapping, overrides)
    key = metric.key

    def pair_of(runs: Sequence[Run], example: Example | None) -> dict[str, Any]:
        if len(runs) != 2:
            raise ValueError(f"{key}: compares the runs of two experiments, got {len(runs)}")
        reference = example.outputs if example is not None else None
        first, second = (
            fields.resolve(
                _sources(
                    example.inputs if example is not None and example.inputs else run.inputs,
                    run.outputs,
                    reference,
                ),
                required=("response",),
                metric=key,
                extras={"run": run, "example": example},
            )
            for run in runs
        )
        return {
            "user_input": first.user_input,
            "response_a": first.response,
            "response_b": second.response,
            "reference": first.reference,
        }

    def compare(runs: Sequence[Run], example: Example | None = None) -> dict[str, Any]:
        try:
            result = metric.invoke(pair_of(runs, example))
        except Exception as error:  # the comparison goes on; this pair has no score
            return {
                "key": key,
                "scores": {run.id: None for run in runs},
                "comment": error_comment(error),
            }
        score = result.score
        assert score is not None  # a pairwise result always has one
        return {
            "key": key,
            "scores": {runs[0].id: score, runs[1].id: 1.0 - score},
            "comment": result.reason,
        }

    compare.__name__ = key  # LangSmith names the evaluator's own run after it
    return compare
