"""Reading a judge's reply as a careful reader would, when LangChain's parser gave up.

Real judge models put the JSON they were asked for in many wrappers: inside ````json``
fences, after a line of prose, after a reasoning block (``<think>...</think>``, as
reasoning models served by Ollama or vLLM write it), as message content although a tool
call was forced, or as tool-call arguments that do not parse (LangChain puts those in
``AIMessage.invalid_tool_calls``). :func:`read_reply` looks in each place, in that
order: the tool calls, the invalid tool calls, the content. What it finds must still
validate against the schema; it never guesses a meaning:

- text that repeats the judged input (an echoing judge quotes the response it judges,
  and the response is untrusted) is no part of the reply, wherever it stands: a JSON
  object in it, or one the judged input holds, is never taken, and a reasoning tag in it
  opens or closes nothing (:func:`judged_input` says what the input was);
- two different objects that both fit the schema are refused (which one was meant?);
- a reply with no object that fits says what to change, for the re-ask
  (:attr:`Reading.problem`), and what came back, redacted (:attr:`Reading.excerpt`).

    >>> from langchain_core.messages import AIMessage
    >>> from langchain_answer_metrics.judging.schemas import AspectVerdict
    >>> answer = '{"reason": "r", "verdict": "Pass"}'
    >>> reply = AIMessage(f'<think>{{maybe}}</think>\\n```json\\n{answer}\\n```')
    >>> read_reply(reply, AspectVerdict).parsed
    AspectVerdict(reason='r', verdict='PASS')
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from langchain_answer_metrics.core.redaction import redact
from langchain_answer_metrics.judging.echoes import JudgedInput, judged_input
from langchain_answer_metrics.judging.errors import for_user

__all__ = [
    "EXCERPT_CHARS",
    "JudgedInput",
    "Reading",
    "excerpt",
    "json_objects",
    "judged_input",
    "read_reply",
    "reply_text",
]

SchemaT = TypeVar("SchemaT", bound=BaseModel)

EXCERPT_CHARS = 200

# Reasoning blocks as reasoning models write them. Some chat templates open the block in
# the prompt, so a reply may carry only the closing tag: all before it is reasoning.
_REASONING_TAGS = ("think", "thinking", "reasoning")
_CLOSED_BLOCK = re.compile(
    r"<(" + "|".join(_REASONING_TAGS) + r")>.*?</\1>", re.DOTALL | re.IGNORECASE
)
_CLOSING_TAG = re.compile(r"</(?:" + "|".join(_REASONING_TAGS) + r")>", re.IGNORECASE)
_OPENING_TAG = re.compile(r"<(?:" + "|".join(_REASONING_TAGS) + r")>", re.IGNORECASE)

_DECODER = json.JSONDecoder()
_MAX_ERRORS_SHOWN = 3


@dataclass
class Reading(Generic[SchemaT]):
    """What a reply held: the schema object (or None), and if None, why and what came back.

    ``problem`` is written for the model, to be sent back in a re-ask; ``excerpt`` is the
    start of the reply, redacted, for the error a user reads.
    """

    parsed: SchemaT | None
    problem: str = ""
    excerpt: str = ""
    candidates: int = field(default=0, repr=False)


def reply_text(message: Any) -> str:
    """A message's text content: the string, or its text blocks joined."""
    content = getattr(message, "content", message)
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            part if isinstance(part, str) else str(part.get("text", ""))
            for part in content
            if isinstance(part, str) or (isinstance(part, dict) and part.get("type") == "text")
        ]
        return "".join(parts)
    return ""


Span = tuple[int, int]


def reasoning_spans(text: str) -> list[Span]:
    """Where ``text`` holds reasoning: its closed blocks, all before the last closing tag
    (the block was opened in the prompt), and all after an opening tag left unclosed."""
    spans = [match.span() for match in _CLOSED_BLOCK.finditer(text)]
    rest = _CLOSED_BLOCK.sub(lambda match: " " * len(match.group()), text)
    closing = list(_CLOSING_TAG.finditer(rest))
    start = closing[-1].end() if closing else 0
    if closing:
        spans.append((0, start))
    opening = _OPENING_TAG.search(rest, start)
    if opening:
        spans.append((opening.start(), len(text)))
    return spans


def _inside(position: int, spans: list[Span]) -> bool:
    return any(start <= position < end for start, end in spans)


def json_objects(text: str, judged: JudgedInput | None = None) -> list[Any]:
    """Every top-level JSON object in ``text`` (outside reasoning blocks), in order.

    Prose, code fences and stray braces around them are skipped; an object inside
    another is part of it, not one more. With ``judged``, the judged input a reply may
    repeat: an object in text that repeats it, or one it holds, is skipped, and its
    reasoning tags are not taken for the judge's own.
    """
    echoes = judged.echoes_in(text) if judged else []
    masked = text
    for start, end in echoes:  # same length, so positions stay those of text
        masked = masked[:start] + " " * (end - start) + masked[end:]
    hidden = echoes + reasoning_spans(masked)
    found: list[Any] = []
    position = text.find("{")
    while position >= 0:
        if _inside(position, hidden):
            position = text.find("{", position + 1)
            continue
        try:
            value, end = _DECODER.raw_decode(text, position)
        except ValueError:
            position = text.find("{", position + 1)
            continue
        if judged is None or not judged.holds(text[position:end], value):
            found.append(value)
        position = text.find("{", end)
    return found


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """The start of ``text``, one line, redacted (keys and URL credentials hidden)."""
    flat = " ".join(redact(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _raw_reply(message: Any) -> str:
    """What came back, for the excerpt: the content, else the tool calls' arguments."""
    text = reply_text(message).strip()
    if text:
        return text
    calls = [json.dumps(call.get("args"), ensure_ascii=False) for call in _calls(message)]
    invalid = [str(call.get("args") or "") for call in _invalid_calls(message)]
    return " ".join(calls + invalid) or "(an empty reply)"


def _calls(message: Any) -> list[dict[str, Any]]:
    return list(getattr(message, "tool_calls", None) or [])


def _invalid_calls(message: Any) -> list[dict[str, Any]]:
    return list(getattr(message, "invalid_tool_calls", None) or [])


def _describe(error: ValidationError) -> str:
    """A validation error as a model can act on it: which field, what it must be."""
    parts = []
    for item in error.errors()[:_MAX_ERRORS_SHOWN]:
        where = ".".join(str(part) for part in item["loc"]) or "the object"
        given = item.get("input")
        shown = json.dumps(given, ensure_ascii=False, default=str)
        shown = shown if len(shown) <= 60 else shown[:59] + "…"
        if item["type"] == "literal_error":
            expected = item.get("ctx", {}).get("expected", "")
            parts.append(f"{where} must be exactly one of {expected}, not {shown}")
        elif item["type"] == "missing":
            parts.append(f"{where} is missing")
        else:
            parts.append(f"{where}: {item['msg']} (got {shown})")
    more = len(error.errors()) - _MAX_ERRORS_SHOWN
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


@dataclass
class _Source:
    """One place a reply may hold the object: its candidates, and what went wrong there."""

    values: list[Any]
    unreadable: str = ""  # why the place held no JSON, when that is worth saying


def _sources(message: Any, schema_name: str, judged: JudgedInput | None) -> list[_Source]:
    # A tool call's arguments are the judge's structured channel: taken as given.
    sources = [_Source([call.get("args") for call in _calls(message)])]
    for call in _invalid_calls(message):
        arguments = str(call.get("args") or "")
        values = json_objects(arguments, judged)
        detail = f" ({for_user(str(call['error']))})" if call.get("error") else ""
        sources.append(
            _Source(
                values,
                f"the {call.get('name') or schema_name} tool call's arguments "
                f"were not valid JSON{detail}",
            )
        )
    sources.append(_Source(json_objects(reply_text(message), judged)))
    return sources


def read_reply(
    message: Any,
    schema: type[SchemaT],
    *,
    tool: bool = False,
    judged: JudgedInput | None = None,
) -> Reading[SchemaT]:
    """The ``schema`` object ``message`` holds, read tolerantly; see the module doc.

    ``tool`` says the request forced a tool call, for the wording of the problem;
    ``judged`` is the request's judged input (:func:`judged_input`), which the reply's
    text may repeat and which is never read as the judge's answer.
    """
    name = schema.__name__
    failures: list[str] = []
    unreadable: list[str] = []
    candidates = 0
    for source in _sources(message, name, judged):
        if source.unreadable and not source.values:
            unreadable.append(source.unreadable)
        fitting: list[SchemaT] = []
        for value in source.values:
            candidates += 1
            try:
                parsed = schema.model_validate(value)
            except ValidationError as error:
                failures.append(_describe(error))
                continue
            if parsed not in fitting:
                fitting.append(parsed)
        if len(fitting) == 1:
            return Reading(parsed=fitting[0], candidates=candidates)
        if len(fitting) > 1:
            problem = (
                f"the reply held {len(fitting)} different {name} objects; "
                f"give exactly one. {_how(name, tool)}"
            )
            return Reading(None, problem, excerpt(_raw_reply(message)), candidates)
    if failures:
        problem = f"no valid {name} was found: {failures[0]}."
    elif unreadable:
        problem = f"no valid {name} was found: {unreadable[0]}. {_how(name, True)}"
    else:
        problem = f"no valid {name} was found: the reply held no JSON object. {_how(name, tool)}"
    return Reading(None, problem, excerpt(_raw_reply(message)), candidates)


def _how(name: str, tool: bool) -> str:
    if tool:
        return f"Call the {name} tool with one JSON object as its arguments."
    return "Reply with only the JSON object, no prose or code fences."
