"""The toy judge's rules for ``judge_relevance`` (``RelevanceVerdict``): plausible in
English, Russian and Chinese, never right on hard cases. **Not an evaluator.**

- Non-committal: the answer declines (:func:`~.heuristic_judge.is_abstention`: "I don't
  know", "не знаю", "不知道" ...) or only hedges ("it depends", "сложно сказать",
  "很难说" ...): verdict ``none``.
- Otherwise the share of the question's content words the answer repeats (words minus
  stopwords and question words, Russian cut to five letters, CJK as character bigrams)
  decides: at least half ``full``, any ``partial``, none ``none``. A "when" question
  answered without a number is at most ``partial``; a short answer with a number ("In
  1889.") goes up a level.

Reasons are in the answer's language.

    >>> answer({"question": "When was the Eiffel Tower built?",
    ...         "answer": "The Eiffel Tower was built in 1889."})["verdict"]
    'full'
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from langchain_answer_metrics.testing.heuristic_judge import is_abstention, language_of
from langchain_answer_metrics.testing.prompt_reading import ToyStep, register_toy_step

_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"
_WORD_RE = re.compile(rf"[{_CJK}]+|[^\W\d_{_CJK}]+|\d+")
# Question words and particles: what a question has and its answer need not repeat.
_CJK_QUESTION = re.compile(
    "什么时候|什么|时候|哪一年|哪里|哪儿|哪个|为什么|怎么|如何|多少|何时|何地|谁|吗|呢|是|的|在"
)
_STOPWORD_TEXT = """a an the of in on at to for and or is are was were be been do does did how what
    when where which who whom why whose it its this that with by from as about can could
    would should will i you me my your we our they their there please tell
    и в во на с со к по о об от до за из у а но или ли же что как когда где кто какой
    какая какое какие каков почему зачем сколько чем это этот эта был была было были есть
    мне ты вы мы он она они его её их"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_WHEN = ("when", "what year", "which year", "когда", "в каком году", "何时", "什么时候", "哪一年")
_HEDGES = (
    "it depends",
    "hard to say",
    "difficult to say",
    "there are many factors",
    "сложно сказать",
    "трудно сказать",
    "всё зависит",
    "все зависит",
    "зависит от",
    "很难说",
    "视情况而定",
    "不好说",
    "看情况",
)

_REASONS = {
    "noncommittal": {
        "en": "The answer avoids the question and commits to no answer.",
        "ru": "Ответ уклоняется от вопроса и ничего не утверждает.",
        "zh": "回答回避了问题，没有给出答案。",
    },
    "full": {
        "en": "The answer addresses what the question asks.",
        "ru": "Ответ отвечает на заданный вопрос.",
        "zh": "回答针对了问题所问的内容。",
    },
    "partial": {
        "en": "The answer addresses only part of the question.",
        "ru": "Ответ отвечает только на часть вопроса.",
        "zh": "回答只回答了问题的一部分。",
    },
    "none": {
        "en": "The answer talks about something else.",
        "ru": "Ответ говорит о другом.",
        "zh": "回答说的是别的内容。",
    },
}


def content_words(text: str) -> set[str]:
    """The words that carry a text's topic: stopwords out, stems in, CJK as bigrams.

    Example:
        >>> sorted(content_words("When was the Eiffel Tower built?"))
        ['built', 'eiffel', 'tower']
    """
    words: set[str] = set()
    for raw in _WORD_RE.findall(_CJK_QUESTION.sub(" ", text.lower())):
        if re.fullmatch(f"[{_CJK}]+", raw):
            words.update([raw] if len(raw) == 1 else (raw[i : i + 2] for i in range(len(raw) - 1)))
        elif raw not in _STOPWORDS:
            cyrillic = "\u0400" <= raw[0] <= "\u04ff"
            words.add(raw[:5] if cyrillic else raw[:-1] if raw.endswith("s") else raw)
    return words


def is_noncommittal(text: str) -> bool:
    """Declines (an abstention) or only hedges, or says nothing at all.

    Example:
        >>> is_noncommittal("Сложно сказать."), is_noncommittal("In 1889.")
        (True, False)
    """
    lowered = text.lower()
    return not text.strip() or is_abstention(text) or any(h in lowered for h in _HEDGES)


def answer(sections: Mapping[str, str]) -> dict[str, Any]:
    """RelevanceVerdict arguments for the prompt's ``<question>`` and ``<answer>``."""
    question, response = sections.get("question", ""), sections.get("answer", "")
    language = language_of(response or question)
    if is_noncommittal(response):
        reason = _REASONS["noncommittal"][language]
        return {"reason": reason, "noncommittal": True, "verdict": "none"}
    asked = content_words(question)
    shared = len(asked & content_words(response)) / len(asked) if asked else 0.0
    verdict = "full" if shared >= 0.5 else "partial" if shared > 0 else "none"
    if any(word in question.lower() for word in _WHEN):
        dated = bool(re.search(r"\d", response))
        if verdict == "full" and not dated:
            verdict = "partial"
        elif verdict != "full" and dated and len(_WORD_RE.findall(response)) <= 6:
            verdict = "full" if verdict == "partial" else "partial"  # "In 1889."
    return {"reason": _REASONS[verdict][language], "noncommittal": False, "verdict": verdict}


# <question> and <answer> together are this step's alone (judge_aspect has <response>).
TOY_RELEVANCE = register_toy_step(
    ToyStep("RelevanceVerdict", frozenset({"question", "answer"}), answer)
)
