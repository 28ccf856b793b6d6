"""Fit long texts to an embedding model's input limit, as the spec prescribes.

``"chunk"`` (the spec's default) splits on sentence boundaries into pieces of at most
``max_tokens`` tokens; ``"truncate"`` keeps the first piece; ``"fail_fast"`` refuses a
text over the limit, but only when the model's own tokenizer counted it: with only an
estimate, the text is sent as it is, and the provider says whether it fits (as the
original library does). A 3-characters-a-token estimate must not refuse a text the
provider accepts; the result's details then say the limit was not checked
(``limit_checked=False``).

Tokens are counted honestly: with the embedding model's own tokenizer when it exposes
one (a ``count_tokens(text) -> int`` method, as the bundled local model does), else by
the package's one conservative estimate (:mod:`.token_estimate`: one token per CJK
character, one per ``chars_per_token`` other characters, 3.0 by default, the original
library's rule: it counts a 264-character Russian text as 88 tokens, where one token per
word said 40).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from langchain_answer_metrics.judging.model_facts import optional_attribute
from langchain_answer_metrics.judging.token_estimate import (
    DEFAULT_CHARS_PER_TOKEN,
    estimate_tokens,
)

__all__ = [
    "DEFAULT_CHARS_PER_TOKEN",
    "LONG_TEXT_MODES",
    "LongTextMode",
    "TextTooLongError",
    "TokenCounter",
    "check_limit",
    "chunk_text",
    "estimate_tokens",
    "estimated",
    "fit_to_limit",
    "limit_checked",
    "token_counter",
]

LongTextMode = Literal["chunk", "truncate", "fail_fast"]
LONG_TEXT_MODES: tuple[LongTextMode, ...] = ("chunk", "truncate", "fail_fast")

_SENTENCE_END = re.compile(r"(?<=[.!?。！？；;…])\s+|(?<=[。！？；])")
_WORD = re.compile(r"\S+\s*|\s+")


class TextTooLongError(ValueError):
    def __init__(self, tokens: int, max_tokens: int) -> None:
        self.tokens = tokens
        self.max_tokens = max_tokens
        super().__init__(
            f"is {tokens} tokens (by the embedding model's tokenizer), over the embedding "
            f"limit of {max_tokens} (long_text='fail_fast'; use 'chunk' or 'truncate' to "
            "embed it anyway)"
        )


@dataclass(frozen=True)
class TokenCounter:
    """How tokens are counted for one embedding model: its tokenizer, or an estimate."""

    count: Callable[[str], int]
    method: Literal["tokenizer", "chars_per_token"]

    @property
    def exact(self) -> bool:
        """Whether the model's own tokenizer counts (not an estimate)."""
        return self.method == "tokenizer"


def estimated(chars_per_token: float = DEFAULT_CHARS_PER_TOKEN) -> TokenCounter:
    """The package's estimate (:func:`.token_estimate.estimate_tokens`) as a counter."""
    estimate_tokens("", chars_per_token)  # a bad chars_per_token fails here, not later
    return TokenCounter(lambda text: estimate_tokens(text, chars_per_token), "chars_per_token")


def token_counter(model: Any, chars_per_token: float = DEFAULT_CHARS_PER_TOKEN) -> TokenCounter:
    """``model``'s own tokenizer (``count_tokens``) if it has one, else the estimate."""
    count = optional_attribute(model, "count_tokens")
    if callable(count):
        return TokenCounter(lambda text: int(count(text)), "tokenizer")
    return estimated(chars_per_token)


def _split_to_fit(text: str, max_tokens: int, counter: TokenCounter) -> list[str]:
    """``text`` in consecutive pieces of at most ``max_tokens`` (by words, else characters)."""
    units: list[str] = []
    for word in _WORD.findall(text):
        if counter.count(word) <= max_tokens:
            units.append(word)
        else:  # a word longer than the limit (or unspaced script): by characters
            units.extend(word)
    pieces: list[str] = []
    current = ""
    for unit in units:
        if current and counter.count((current + unit).strip()) > max_tokens:
            pieces.append(current)
            current = ""
        current += unit
    if current:
        pieces.append(current)
    return [piece.strip() for piece in pieces if piece.strip()]


def chunk_text(
    text: str, *, max_tokens: int = 512, counter: TokenCounter | None = None
) -> list[str]:
    """Split ``text`` on sentence boundaries into chunks of at most ``max_tokens``.

    Each chunk is counted whole, as the model will read it."""
    counter = counter or estimated()
    if counter.count(text) <= max_tokens:
        return [text]
    chunks: list[str] = []
    current: list[str] = []
    for sentence in (part.strip() for part in _SENTENCE_END.split(text)):
        if not sentence:
            continue
        if counter.count(sentence) > max_tokens:
            if current:
                chunks.append(" ".join(current))
                current = []
            chunks.extend(_split_to_fit(sentence, max_tokens, counter))
            continue
        if current and counter.count(" ".join([*current, sentence])) > max_tokens:
            chunks.append(" ".join(current))
            current = []
        current.append(sentence)
    if current:
        chunks.append(" ".join(current))
    return chunks


def limit_checked(mode: LongTextMode, counter: TokenCounter) -> bool | None:
    """Whether ``fail_fast`` checks texts against the limit with ``counter``: False with
    only an estimate (texts are sent as they are); None for the other modes, which fit
    texts to the limit rather than check them."""
    return counter.exact if mode == "fail_fast" else None


def check_limit(text: str, *, max_tokens: int, counter: TokenCounter) -> None:
    """Raise :class:`TextTooLongError` for a text the model's tokenizer counts over
    ``max_tokens``; with only an estimate, nothing is refused (see the module doc)."""
    if counter.exact:
        tokens = counter.count(text)
        if tokens > max_tokens:
            raise TextTooLongError(tokens, max_tokens)


def fit_to_limit(
    text: str, *, max_tokens: int, mode: LongTextMode, counter: TokenCounter | None = None
) -> list[str]:
    """The piece(s) of ``text`` to embed under ``mode``."""
    counter = counter or estimated()
    if mode == "chunk":
        return chunk_text(text, max_tokens=max_tokens, counter=counter)
    if mode == "fail_fast":
        check_limit(text, max_tokens=max_tokens, counter=counter)
        return [text]
    if counter.count(text) <= max_tokens:
        return [text]
    return [_split_to_fit(text, max_tokens, counter)[0]]
