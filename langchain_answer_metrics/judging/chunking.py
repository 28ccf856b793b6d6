"""Fit long texts to an embedding model's input limit, as the spec prescribes.

``"chunk"`` (the spec's default) splits on sentence boundaries into pieces of at most
``max_tokens`` estimated tokens; ``"truncate"`` keeps the first piece; ``"fail_fast"``
refuses a text over the limit.
"""

from __future__ import annotations

import re
from typing import Literal

LongTextMode = Literal["chunk", "truncate", "fail_fast"]
LONG_TEXT_MODES: tuple[LongTextMode, ...] = ("chunk", "truncate", "fail_fast")

# A token is roughly a word or a punctuation mark; each CJK character counts as one,
# which over-estimates slightly for Chinese and keeps chunks safely under the limit.
_TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]|[^\W\d_]+|\d+|[^\w\s]")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？；;…])\s+|(?<=[。！？；])")


class TextTooLongError(ValueError):
    def __init__(self, tokens: int, max_tokens: int) -> None:
        self.tokens = tokens
        self.max_tokens = max_tokens
        super().__init__(
            f"is about {tokens} tokens, over the embedding limit of {max_tokens} "
            "(long_text='fail_fast'; use 'chunk' or 'truncate' to embed it anyway)"
        )


def estimate_tokens(text: str) -> int:
    return len(_TOKEN.findall(text))


def _split_by_tokens(sentence: str, max_tokens: int) -> list[str]:
    matches = list(_TOKEN.finditer(sentence))
    pieces = []
    for start in range(0, len(matches), max_tokens):
        group = matches[start : start + max_tokens]
        end = (
            matches[start + max_tokens].start()
            if start + max_tokens < len(matches)
            else len(sentence)
        )
        pieces.append(sentence[group[0].start() : end].strip())
    return [piece for piece in pieces if piece]


def chunk_text(text: str, *, max_tokens: int = 512) -> list[str]:
    """Split ``text`` on sentence boundaries into chunks of at most ``max_tokens``."""
    if estimate_tokens(text) <= max_tokens:
        return [text]
    chunks: list[str] = []
    current: list[str] = []
    current_tokens = 0
    for sentence in (part.strip() for part in _SENTENCE_END.split(text)):
        if not sentence:
            continue
        tokens = estimate_tokens(sentence)
        if tokens > max_tokens:
            if current:
                chunks.append(" ".join(current))
                current, current_tokens = [], 0
            chunks.extend(_split_by_tokens(sentence, max_tokens))
            continue
        if current and current_tokens + tokens > max_tokens:
            chunks.append(" ".join(current))
            current, current_tokens = [], 0
        current.append(sentence)
        current_tokens += tokens
    if current:
        chunks.append(" ".join(current))
    return chunks


def fit_to_limit(text: str, *, max_tokens: int, mode: LongTextMode) -> list[str]:
    """The piece(s) of ``text`` to embed under ``mode``."""
    if mode == "chunk":
        return chunk_text(text, max_tokens=max_tokens)
    tokens = estimate_tokens(text)
    if tokens <= max_tokens:
        return [text]
    if mode == "truncate":
        return [_split_by_tokens(text, max_tokens)[0]]
    raise TextTooLongError(tokens, max_tokens)
