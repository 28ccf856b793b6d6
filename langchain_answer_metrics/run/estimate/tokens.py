"""Counting tokens offline: a pluggable counter, a documented default, completion ranges.

The counter is a function ``text -> int``, or a tokenizer: anything with
``get_num_tokens(text)`` (a LangChain model) or ``encode(text)`` (tiktoken, Hugging
Face). Without one, :func:`default_token_count` is the package's one estimate, the
same that chunks texts for embedding models and counts their input
(:mod:`langchain_answer_metrics.judging.token_estimate`): one token per CJK character
(Han, kana, Hangul), one per 3.0 characters of everything else, rounded up. It is meant
to sit at or above a real tokenizer's count: about a third above ``chars / 4`` for
English, near OpenAI's tokenizers for Russian and Chinese.

A chat request costs its messages' tokens plus :data:`MESSAGE_OVERHEAD` per message
(OpenAI's chat format adds about 3 to 4 tokens for each message's role and separators),
and, with ``count_schema``, the tool or response-format definition it sends.
How far the default is from a given rule is measured in benchmarks/RESULTS.md.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from langchain_answer_metrics.judging.steps.intent import StepIntent
from langchain_answer_metrics.judging.token_estimate import estimate_tokens

TokenCounter = Callable[[str], int]

MESSAGE_OVERHEAD = 4


def default_token_count(text: str) -> int:
    """The package's estimate: 1 token per CJK character, 1 per 3.0 other characters
    (rounded up); see :mod:`langchain_answer_metrics.judging.token_estimate`."""
    return estimate_tokens(text)


def as_token_counter(counter: Any) -> TokenCounter:
    """A ``text -> int`` function from a function, a LangChain model or a tokenizer."""
    if counter is None:
        return default_token_count
    get_num_tokens = getattr(counter, "get_num_tokens", None)
    if callable(get_num_tokens):
        return lambda text: int(get_num_tokens(text))
    encode = getattr(counter, "encode", None)
    if callable(encode):
        return lambda text: len(encode(text))
    if callable(counter):
        return lambda text: int(counter(text))
    raise TypeError(
        "token_counter= takes a function text -> int, or a tokenizer with get_num_tokens() "
        f"or encode(), got {type(counter).__name__}"
    )


def message_text(message: Any) -> str:
    """A message's text; content may be a string or a list of parts."""
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content
        )
    return str(content)


def request_schema(options: dict[str, Any]) -> str:
    """The tool or response-format definition a chat request sends, as JSON (or "")."""
    sent = {key: options[key] for key in ("tools", "response_format") if options.get(key)}
    return json.dumps(sent, ensure_ascii=False, default=str) if sent else ""


# Completion tokens per reply, low and high, by step. Derived from the reply shapes
# (judging/schemas.py), in tokens of the counter: the JSON keys and punctuation, plus
# what the model writes.
# - ClaimList: {"claims": [...]} restates the text's facts: 0.6x to 1.5x the text, + 8.
DECOMPOSE_RATIO = (0.6, 1.5)
DECOMPOSE_FIXED = 8
# - ClaimVerdicts: per claim {"index", "verdict", "reason": one sentence, "evidence":
#   a short quote or empty}: 20 tokens (terse reason, no evidence) to 70 (full ones).
VERDICT_TOKENS = (20, 70)
VERDICTS_FIXED = 6
# - AspectVerdict: {"reason": ..., "verdict": "PASS"|"FAIL"}, per sampled choice.
ASPECT_TOKENS = (15, 90)


def completion_range(
    schema: str, count: TokenCounter, intent: StepIntent | None, choices: int
) -> tuple[int, int]:
    """The (low, high) completion tokens of one request for ``schema`` with ``choices``
    replies, from what its step asked (``intent``: the text decomposed, the claims)."""
    if schema == "ClaimList":
        text = count(intent.text or "") if intent is not None else 0
        low = DECOMPOSE_FIXED + math.floor(DECOMPOSE_RATIO[0] * text)
        high = DECOMPOSE_FIXED + math.ceil(DECOMPOSE_RATIO[1] * text)
    elif schema == "ClaimVerdicts":
        claims = len(intent.claims) if intent is not None else 0
        low = VERDICTS_FIXED + VERDICT_TOKENS[0] * claims
        high = VERDICTS_FIXED + VERDICT_TOKENS[1] * claims
    else:  # AspectVerdict, or a schema of the user's own: a short judgement
        low, high = ASPECT_TOKENS
    return low * choices, high * choices
