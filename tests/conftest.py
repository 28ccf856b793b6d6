"""Scripted judges shared by the core tests.

A *fact judge* answers every step from the prompt alone, never from call order:

- ``ClaimList`` (decompose_claims): the claims listed for the text in ``claims``, else the
  text's sentences;
- ``ClaimVerdicts`` (verify_claims): the verdict listed for the claim in ``verdicts``, else
  "supported" when every word of the claim occurs in the source, else "neutral";
- ``AspectVerdict`` (judge_aspect): ``votes[i - 1]`` for the i-th independent vote, or
  PASS when no votes are given.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage

from langchain_answer_metrics.testing.scripted import (
    Reply,
    Responder,
    ScriptedChatModel,
    numbered_claims,
    prompt_section,
)

REASK_MARK = "Your previous reply could not be used"

# The spec's TP/FP/FN example: one claim on each side is supported, one is not.
EINSTEIN_REFERENCE = "Einstein was born in Germany in 1879."
EINSTEIN_RESPONSE = "Einstein was born in Spain in 1879."
EINSTEIN_CLAIMS = {
    EINSTEIN_REFERENCE: ["Einstein was born in Germany.", "Einstein was born in 1879."],
    EINSTEIN_RESPONSE: ["Einstein was born in Spain.", "Einstein was born in 1879."],
}

_WORD = re.compile(r"[\u3400-\u9fff]|[^\W\u3400-\u9fff]+")
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s*")
_VOTE = re.compile(r"Independent vote (\d+) of (\d+)")


def words(text: str) -> set[str]:
    """Lower-cased words; each CJK character counts as a word."""
    return {word.lower() for word in _WORD.findall(text)}


def sentences(text: str) -> list[str]:
    return [part.strip() for part in _SENTENCE.split(text) if part.strip()]


def is_reask(messages: Sequence[BaseMessage]) -> bool:
    return REASK_MARK in str(messages[-1].content)


def vote_number(messages: Sequence[BaseMessage]) -> int:
    found = _VOTE.search(str(messages[-1].content))
    return int(found.group(1)) if found else 1


def verdicts_for(
    claims: Sequence[str], source: str, overrides: Mapping[str, str] | None = None
) -> list[dict[str, Any]]:
    overrides = overrides or {}
    replies = []
    for index, claim in enumerate(claims, 1):
        verdict = overrides.get(claim) or (
            "supported" if words(claim) <= words(source) else "neutral"
        )
        replies.append(
            {"index": index, "verdict": verdict, "reason": f"checked: {claim}", "evidence": ""}
        )
    return replies


def fact_responder(
    *,
    claims: Mapping[str, list[str]] | None = None,
    verdicts: Mapping[str, str] | None = None,
    votes: Sequence[str] | None = None,
) -> Responder:
    claims = dict(claims or {})

    def reply(schema: str, messages: list[BaseMessage]) -> Reply:
        if schema == "ClaimList":
            text = prompt_section(messages, "text")
            return {"claims": claims.get(text, sentences(text))}
        if schema == "ClaimVerdicts":
            source = prompt_section(messages, "source")
            return {"verdicts": verdicts_for(numbered_claims(messages), source, verdicts)}
        if schema == "AspectVerdict":
            verdict = votes[vote_number(messages) - 1] if votes else "PASS"
            return {"verdict": verdict, "reason": f"vote {verdict}"}
        raise AssertionError(f"unexpected schema {schema!r}")

    return reply


def fact_judge(model: str = "judge-a", *, latency: float = 0.0, **script: Any) -> ScriptedChatModel:
    """A ScriptedChatModel answering with :func:`fact_responder` (``script`` its options)."""
    return ScriptedChatModel(responder=fact_responder(**script), model=model, latency=latency)


def schemas_called(model: ScriptedChatModel) -> list[str]:
    return [schema for schema, _ in model.calls]


def user_prompts(model: ScriptedChatModel, schema: str) -> list[str]:
    """The user prompt (before any re-ask) of every request for ``schema``."""
    return [str(messages[1].content) for name, messages in model.calls if name == schema]
