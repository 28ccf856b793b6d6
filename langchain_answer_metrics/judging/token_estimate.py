"""The one token estimate for text counted without a tokenizer.

Used wherever the package must count tokens and has no tokenizer for the model: chunking
long texts for an embedding model (:mod:`.chunking`), the input tokens of embedding
requests (embedding replies carry no usage), and the cost estimate before a run
(:func:`langchain_answer_metrics.costs.default_token_count`). The rule:

- one token per CJK character (Han, kana, Hangul, CJK punctuation): OpenAI's tokenizers
  give about 0.7 to 1.5 a character, embedding models' WordPiece/SentencePiece about 1;
- one token per ``chars_per_token`` characters of everything else (3.0 by default, the
  original library's rule: English runs at about 4 characters a token, Russian and other
  Cyrillic text at about 2.5 to 3.5), rounded up.

It is meant to sit at or above a real tokenizer's count, never below: a chunk it says
fits must fit the model's limit, and an estimated bill should not come in low. So it
overstates English (about a third above ``chars / 4``); a model's own tokenizer, where
there is one, is always preferred. ``chars_per_token`` is the user's knob (on a metric,
an ``Embedder`` or a models-file entry) for the non-CJK part; CJK stays one a character.
"""

from __future__ import annotations

import math
import re

__all__ = ["DEFAULT_CHARS_PER_TOKEN", "cjk_characters", "estimate_tokens"]

DEFAULT_CHARS_PER_TOKEN = 3.0
"""Characters per token of non-CJK text in the default estimate."""

# Han, kana, Hangul, and their punctuation and full-width forms (。，！ are a token each).
_CJK = re.compile(
    r"[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]"
)


def cjk_characters(text: str) -> int:
    """How many CJK characters (Han, kana, Hangul) ``text`` holds."""
    return len(_CJK.findall(text))


def estimate_tokens(text: str, chars_per_token: float = DEFAULT_CHARS_PER_TOKEN) -> int:
    """1 token per CJK character + ``ceil(other characters / chars_per_token)``."""
    if not chars_per_token > 0:
        raise ValueError(f"chars_per_token must be positive, got {chars_per_token}")
    cjk = cjk_characters(text)
    return cjk + math.ceil((len(text) - cjk) / chars_per_token)
