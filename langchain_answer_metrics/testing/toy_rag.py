"""The toy judge's rules for the RAG steps (``judge_context_usefulness``,
``judge_context_relevance``).

**Not an evaluator**, like :mod:`.heuristic_judge`, whose tokens it reuses: plausible
verdicts on easy cases, in English, Russian and Chinese, so docs examples, the demo and
tests run the real HTTP path offline.

``ContextVerdicts``
    One verdict per ``<context index="i">`` of ``<source>`` (a ``<source>`` without
    context tags is one context), against ``<reference>``. A context is "useful" when it
    shares key tokens with the reference (numbers and capitalised words: at least two,
    or all the reference has if fewer), or at least half of the reference's tokens
    (Chinese has no capitals: its words are character bigrams). Otherwise "not_useful".
    Reasons are in the reference's language.

    >>> useful_context("Einstein was born in 1879 in Ulm.", "Einstein was born in 1879.")
    True

``ContextRelevanceVerdicts``
    One verdict per context against ``<query>``: "relevant" when the context shares at
    least a quarter of the query's tokens (question words are stopwords), at least one;
    else "not_relevant". Reasons are in the query's language.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from langchain_answer_metrics.testing.heuristic_judge import _Tokens, language_of
from langchain_answer_metrics.testing.prompt_reading import ToyStep, register_toy_step

_CONTEXT_RE = re.compile(r'<context index="(\d+)">\n?(.*?)\n?</context>', re.DOTALL)

_REASONS = {
    "useful": {
        "en": "The context states facts of the reference answer.",
        "ru": "Контекст содержит факты эталонного ответа.",
        "zh": "该上下文包含参考答案中的事实。",
    },
    "not_useful": {
        "en": "The context does not state the reference answer's facts.",
        "ru": "Контекст не содержит фактов эталонного ответа.",
        "zh": "该上下文不包含参考答案中的事实。",
    },
    "relevant": {
        "en": "The context is about what the question asks.",
        "ru": "Контекст о том, что спрашивает вопрос.",
        "zh": "该上下文与问题所问的内容相关。",
    },
    "not_relevant": {
        "en": "The context is not about what the question asks.",
        "ru": "Контекст не о том, что спрашивает вопрос.",
        "zh": "该上下文与问题所问的内容无关。",
    },
}


def contexts_of(source: str) -> list[str]:
    """The numbered contexts of a ``<source>`` section, in order; a bare source is one."""
    found = _CONTEXT_RE.findall(source)
    return [text for _, text in found] if found else [source]


def useful_context(context: str, reference: str) -> bool:
    """Whether ``context`` shares the reference's key tokens (or half of its tokens)."""
    wanted, given = _Tokens(reference), _Tokens(context)
    shared = wanted.all & given.all
    keys = wanted.numbers | wanted.names
    if keys and len(shared & keys) >= min(2, len(keys)):
        return True
    return bool(wanted.all) and len(shared) * 2 >= len(wanted.all)


def judge_contexts(sections: Mapping[str, str]) -> dict[str, Any]:
    """ContextVerdicts arguments for a ``judge_context_usefulness`` prompt's sections."""
    reference = sections.get("reference", "")
    language = language_of(reference or sections.get("question", ""))
    verdicts = []
    for index, context in enumerate(contexts_of(sections.get("source", "")), 1):
        verdict = "useful" if useful_context(context, reference) else "not_useful"
        verdicts.append({"index": index, "reason": _REASONS[verdict][language], "verdict": verdict})
    return {"verdicts": verdicts}


def relevant_context(context: str, query: str) -> bool:
    """Whether ``context`` shares at least a quarter of the query's tokens (one at least)."""
    wanted = _Tokens(query).all
    shared = wanted & _Tokens(context).all
    return bool(shared) and len(shared) * 4 >= len(wanted)


def judge_relevance(sections: Mapping[str, str]) -> dict[str, Any]:
    """ContextRelevanceVerdicts arguments for a ``judge_context_relevance`` prompt."""
    query = sections.get("query", "")
    verdicts = []
    for index, context in enumerate(contexts_of(sections.get("source", "")), 1):
        verdict = "relevant" if relevant_context(context, query) else "not_relevant"
        verdicts.append(
            {"index": index, "reason": _REASONS[verdict][language_of(query)], "verdict": verdict}
        )
    return {"verdicts": verdicts}


TOY_CONTEXT_USEFULNESS = register_toy_step(
    # <reference> is in no built-in step's prompt: it tells this step's json_mode requests apart.
    ToyStep("ContextVerdicts", frozenset({"reference", "source"}), judge_contexts)
)
TOY_CONTEXT_RELEVANCE = register_toy_step(
    ToyStep("ContextRelevanceVerdicts", frozenset({"query", "source"}), judge_relevance)
)
