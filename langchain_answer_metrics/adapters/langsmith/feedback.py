"""How LangSmith is told to read a metric's feedback: its feedback config.

LangSmith applies a key's feedback config the first time it sees the key. Every score
this package reports is in [0, 1], higher is better, so most metrics are
``{"type": "continuous", "min": 0, "max": 1}``. That holds for a
:class:`~langchain_answer_metrics.metrics.custom_judge.CustomJudge` too:

- a scale's score is its level mapped linearly to [0, 1] (the raw level is in the
  feedback's ``extra``: ``details.models[judge].level``), so the thresholds, summaries
  and calibration read it as every other score;
- PASS/FAIL and a continuous score are continuous in [0, 1] (a panel's mean of PASS and
  FAIL is 0.5, which no PASS/FAIL category could hold);
- categories are ``categorical``, one category per label valued at its score, when every
  score the metric can report is one of them: one judge, and no two labels sharing a
  score. A panel's mean (polite 1.0 and neutral 0.5 give 0.75) is no category, and
  LangSmith accepts only a categorical key's values: a panel's categories are continuous.

Under ``higher_is_better=False`` the values are the reported scores (1 - the judge's).

Example:
    >>> feedback_config(CustomJudge(llm=judge, name="tone", criterion="Polite.",
    ...     output=Categories(scores={"polite": 1.0, "rude": 0.0})))["categories"]
    [{'value': 1.0, 'label': 'polite'}, {'value': 0.0, 'label': 'rude'}]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_answer_metrics.metrics.base import AnswerMetric

__all__ = ["FEEDBACK_CONFIG", "feedback_config"]

# Every metric scores in 0..1; LangSmith applies this the first time it sees a key.
FEEDBACK_CONFIG: dict[str, Any] = {"type": "continuous", "min": 0, "max": 1}


def feedback_config(metric: AnswerMetric) -> dict[str, Any]:
    """The LangSmith feedback config of ``metric``'s key (a new dict each call)."""
    output = getattr(metric, "output", None)
    scores = getattr(output, "scores", None)
    if getattr(output, "kind", None) != "categories" or not isinstance(scores, Mapping):
        return dict(FEEDBACK_CONFIG)
    if len(getattr(metric, "llm", ())) != 1:
        return dict(FEEDBACK_CONFIG)
    flip = getattr(metric, "higher_is_better", True) is False
    values = {
        str(label): 1.0 - float(score) if flip else float(score) for label, score in scores.items()
    }
    if len(set(values.values())) != len(values):
        return dict(FEEDBACK_CONFIG)
    ordered = sorted(values.items(), key=lambda item: -item[1])
    return {
        "type": "categorical",
        "categories": [{"value": value, "label": label} for label, value in ordered],
    }
