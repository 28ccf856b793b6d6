"""The toy judge's rule for the pairwise step (``PairwiseVerdict``): the answer sharing
more content words with the reference (else with the question) is better; equal overlap
is a tie. Under a criterion asking for brevity (concise, краткий, 简洁...) the answer with
fewer words is better. Plausible, not a judgment: it ignores order, so it never shows
position bias.

    >>> toy_pairwise({"reference": "Paris", "answer_a": "Paris.", "answer_b": "Lyon."})
    {'reason': 'Answer A shares more with the reference (1 words against 0).', 'verdict': 'A'}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_answer_metrics.testing.heuristic_judge import (
    _CONCISE_CRITERION,
    _Tokens,
    _word_count,
    language_of,
)
from langchain_answer_metrics.testing.prompt_reading import ToyStep, register_toy_step

_REASONS = {
    # language -> (one answer better, a tie)
    "en": (
        "Answer {better} shares more with the {target} ({high} words against {low}).",
        "Both answers share as much with the {target} ({high} words).",
    ),
    "ru": (
        "Ответ {better} ближе к эталону или вопросу ({high} слов против {low}).",
        "Оба ответа одинаково близки к эталону или вопросу ({high} слов).",
    ),
    "zh": (
        "答案{better}与参考或问题更接近（{high}对{low}）。",
        "两个答案与参考或问题同样接近（{high}）。",
    ),
}
_BRIEF_REASONS = {
    "en": (
        "Answer {better} is shorter ({low} words against {high}).",
        "Both answers are as long ({high} words).",
    ),
    "ru": (
        "Ответ {better} короче ({low} слов против {high}).",
        "Оба ответа одинаковой длины ({high} слов).",
    ),
    "zh": ("答案{better}更简短（{low}对{high}）。", "两个答案一样长（{high}）。"),
}


def _overlap(answer: str, target: str) -> int:
    return len(_Tokens(answer).all & _Tokens(target).all)


def toy_pairwise(sections: Mapping[str, str]) -> dict[str, Any]:
    """The toy verdict from the prompt's un-escaped sections."""
    if any(word in sections.get("criterion", "").lower() for word in _CONCISE_CRITERION):
        return _briefer(sections)
    reference = sections.get("reference", "").strip()
    target_name, target = (
        ("reference", reference) if reference else ("question", sections.get("question", ""))
    )
    a = _overlap(sections.get("answer_a", ""), target)
    b = _overlap(sections.get("answer_b", ""), target)
    language = language_of(sections.get("answer_a", "") + sections.get("answer_b", ""))
    one_better, tie = _REASONS[language]
    if a == b:
        return {"reason": tie.format(target=target_name, high=a), "verdict": "tie"}
    better = "A" if a > b else "B"
    reason = one_better.format(better=better, target=target_name, high=max(a, b), low=min(a, b))
    return {"reason": reason, "verdict": better}


def _briefer(sections: Mapping[str, str]) -> dict[str, Any]:
    a = _word_count(sections.get("answer_a", ""))
    b = _word_count(sections.get("answer_b", ""))
    one_better, tie = _BRIEF_REASONS[
        language_of(sections.get("answer_a", "") + sections.get("answer_b", ""))
    ]
    if a == b:
        return {"reason": tie.format(high=a), "verdict": "tie"}
    better = "A" if a < b else "B"
    return {
        "reason": one_better.format(better=better, low=min(a, b), high=max(a, b)),
        "verdict": better,
    }


register_toy_step(ToyStep("PairwiseVerdict", frozenset({"answer_a", "answer_b"}), toy_pairwise))
