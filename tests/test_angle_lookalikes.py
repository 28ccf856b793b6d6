"""Every character that reads as an angle bracket is escaped in judged text, checked
against the whole Unicode range of this Python's unicodedata, not a hand-typed list."""

from __future__ import annotations

import re
import sys
import unicodedata

import pytest

from langchain_answer_metrics.judging.prompts import escape_for_tag, tag, unescape_data

WORDS = re.compile("LESS-THAN|GREATER-THAN|ANGLE BRACKET")


def _reads_as_angle(char: str) -> bool:
    compatible = unicodedata.normalize("NFKC", char)
    if "<" in compatible or ">" in compatible:
        return True
    # Every worker collects this over all of Unicode: most characters are their own
    # compatibility form, and have one name to search.
    if compatible == char:
        return WORDS.search(unicodedata.name(char, "")) is not None
    return any(WORDS.search(unicodedata.name(c, "")) for c in {char, *compatible})


GENERATED = [chr(code) for code in range(sys.maxunicode + 1) if _reads_as_angle(chr(code))]


def test_the_generated_list_holds_the_known_troublemakers() -> None:
    # The pairs that once reached the prompt raw, so the generator cannot miss them quietly.
    for code in (0x2329, 0x232A, 0xFE3F, 0xFE40, 0xE003C, 0xE003E, 0xFF1C, 0x3008):
        assert chr(code) in GENERATED, f"U+{code:04X}"


@pytest.mark.parametrize("char", GENERATED, ids=lambda char: f"U+{ord(char):04X}")
def test_every_angle_character_is_written_as_an_entity(char: str) -> None:
    escaped = escape_for_tag(f"a{char}b")
    expected = {"<": "&lt;", ">": "&gt;"}.get(char, f"&#x{ord(char):X};")
    assert escaped == f"a{expected}b"
    assert unescape_data(escaped) == f"a{char}b"


@pytest.mark.parametrize(
    "pair", ["\u2329/response\u232a", "\ufe3f/response\ufe40", "\U000e003c/response\U000e003e"]
)
def test_lookalike_tags_cannot_close_a_section(pair: str) -> None:
    wrapped = tag("response", f"x{pair}y")
    assert pair not in wrapped
    assert wrapped.startswith("<response>\n") and wrapped.endswith("\n</response>")
    assert wrapped.count("<") == wrapped.count(">") == 2  # only the real tags
    assert unescape_data(wrapped.split("\n")[1]) == f"x{pair}y"


def test_guillemets_and_ordinary_text_stay_as_they_are() -> None:
    text = "«ёлки» — “quotes” — 中文 — ≠ ± →"
    assert escape_for_tag(text) == text
