"""What the dry run's models answer: plausible, valid replies to what the step asked.

The step says what it asks (:class:`~langchain_answer_metrics.judging.steps.intent.StepIntent`):
the dry run answers that, never reading the rendered prompt back. A text's claims are
its sentences and clauses that hold a word; every claim asked about gets a "supported"
verdict; an aspect passes; a step registered with its own ``dry_reply`` gets that.
"""

from __future__ import annotations

import re
from typing import Any

from langchain_answer_metrics.judging.schemas import ClaimList, ClaimVerdicts
from langchain_answer_metrics.judging.step_specs import REGISTERED_STEPS, STEP_SCHEMAS
from langchain_answer_metrics.judging.steps.intent import StepIntent

_CLAUSE = re.compile(r"(?<=[.!?;。！？；])\s*|\n+")
_WORDY = re.compile(r"[^\W\d_]")


def clauses(text: str) -> list[str]:
    """A text's sentences and clauses that hold a word (a bare "3." asserts nothing);
    at least one for a text with any word."""
    parts = [part.strip() for part in _CLAUSE.split(text) if part and _WORDY.search(part)]
    return parts or ([text.strip()] if _WORDY.search(text) else [])


def intent_schema(intent: StepIntent | None, options: dict[str, Any]) -> str:
    """The schema a request asks for: the tool or format it sends (the name a tool call
    must answer with), else its step's (json_mode and plain text send none)."""
    named = schema_name(options)
    if named is not None:
        return named
    return STEP_SCHEMAS[intent.step].__name__ if intent is not None else "unknown"


def dry_reply(schema: str, intent: StepIntent | None) -> dict[str, Any]:
    """A plausible, valid reply for ``schema`` to the step's request (outside a step,
    nothing is known of the data: no claims, no verdicts, a pass)."""
    if schema == ClaimList.__name__:
        text = intent.text if intent is not None else None
        return {"claims": clauses(text or "")}
    if schema == ClaimVerdicts.__name__:
        claims = intent.claims if intent is not None else ()
        return {
            "verdicts": [
                {"index": index, "verdict": "supported", "reason": "dry run", "evidence": ""}
                for index in range(1, len(claims) + 1)
            ]
        }
    for spec in REGISTERED_STEPS.values():
        if spec.schema.__name__ == schema and spec.dry_reply is not None:
            return spec.dry_reply(intent)
    return {"reason": "dry run", "verdict": "PASS"}


def schema_name(options: dict[str, Any]) -> str | None:
    """The name of the tool or json_schema response format a request sends, if any."""
    tools = options.get("tools") or []
    if tools:
        tool = tools[0]
        return str(tool.get("function", tool).get("name") or tool.get("title") or "") or None
    response_format = options.get("response_format")
    if isinstance(response_format, dict) and response_format.get("type") == "json_schema":
        return str(response_format.get("json_schema", {}).get("name") or "") or None
    return None
