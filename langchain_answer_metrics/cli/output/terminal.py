"""Text made safe to print on a terminal: the one cleaning of every message we print.

Apart from the rest of the printing so that a one-line error loads nothing else.
"""

from __future__ import annotations

import re

from langchain_answer_metrics.core.redaction import redact

_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def for_terminal(text: object) -> str:
    """``text`` safe to print: API keys redacted, and every control, escape or bidi
    override character shown as its escape (``\\x1b``, ``\\u202e``) instead of acted on."""
    return _UNSAFE.sub(lambda match: repr(match.group())[1:-1], redact(str(text)))
