"""What the dry run's models answer: plausible, valid replies read from the prompt.

A text's claims are its sentences and clauses that hold a word; every numbered claim
gets a "supported" verdict; an aspect passes.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from langchain_answer_metrics.judging.prompt_set import EXAMPLE_INPUT

_SECTION = re.compile(r"<(?P<name>[a-z_]+)>\n?(?P<body>.*?)\n?</(?P=name)>", re.DOTALL)
_CLAUSE = re.compile(r"(?<=[.!?;。！？；])\s*|\n+")
_WORDY = re.compile(r"[^\W\d_]")


_NUMBERED = re.compile(r"^\s*\d+[.)]\s", re.MULTILINE)
LAST = "_last"  # the last message's text, for a prompt without the usual sections


def prompt_sections(messages: Sequence[BaseMessage]) -> dict[str, str]:
    """The tagged sections (``text``, ``claims``, ``source``...) of a prompt, unescaped,
    and under :data:`LAST` the last message's text. Few-shot examples are not read: their
    sections are not the data (an example's ``<question>`` must not stand for a missing one)."""
    sections: dict[str, str] = {}
    content = ""
    for message in messages:
        content = message.content if isinstance(message.content, str) else str(message.content)
        if isinstance(message, AIMessage) or content.startswith(EXAMPLE_INPUT):
            continue
        for found in _SECTION.finditer(content):
            sections[found.group("name")] = html.unescape(found.group("body"))
    sections[LAST] = content
    return sections


def decomposed_text(sections: dict[str, str]) -> str:
    """The text a decomposition prompt asks about (a prompt of the user's own without a
    ``<text>`` section: its last message)."""
    return sections["text"] if "text" in sections else sections.get(LAST, "")


def claim_count(sections: dict[str, str]) -> int:
    """The claims a verification prompt lists (else its numbered lines)."""
    if "claims" in sections:
        return sum(1 for line in sections["claims"].splitlines() if line.strip())
    return len(_NUMBERED.findall(sections.get(LAST, "")))


def clauses(text: str) -> list[str]:
    """A text's sentences and clauses that hold a word (a bare "3." asserts nothing);
    at least one for a text with any word."""
    parts = [part.strip() for part in _CLAUSE.split(text) if part and _WORDY.search(part)]
    return parts or ([text.strip()] if _WORDY.search(text) else [])


def guess_schema(sections: dict[str, str]) -> str:
    if "criterion" in sections:
        return "AspectVerdict"
    if "claims" in sections:
        return "ClaimVerdicts"
    return "ClaimList"


def dry_reply(schema: str, sections: dict[str, str]) -> dict[str, Any]:
    """A plausible, valid reply to a step's prompt."""
    if schema == "ClaimList":
        return {"claims": clauses(decomposed_text(sections))}
    if schema == "ClaimVerdicts":
        count = claim_count(sections)
        return {
            "verdicts": [
                {"index": index, "verdict": "supported", "reason": "dry run", "evidence": ""}
                for index in range(1, count + 1)
            ]
        }
    return {"reason": "dry run", "verdict": "PASS"}


def schema_name(options: dict[str, Any]) -> str | None:
    tools = options.get("tools") or []
    if tools:
        tool = tools[0]
        return str(tool.get("function", tool).get("name") or tool.get("title") or "") or None
    response_format = options.get("response_format")
    if isinstance(response_format, dict) and response_format.get("type") == "json_schema":
        return str(response_format.get("json_schema", {}).get("name") or "") or None
    return None
