"""Reading the package's judge prompts back, for the toy judge and the local test server.

The prompts put judged data in XML-tagged sections (``<text>``, ``<claims>``, ``<source>``,
``<criterion>``, ``<response>``...); these helpers find them and the schema a request asks for.

This is the one reader of our rendered prompts, for what stands in for a model over HTTP
(the toy judge, the local server). Inside the package nothing reads a prompt back: the
cost estimate's stand-in model answers what the step says it asks
(:mod:`langchain_answer_metrics.judging.steps.intent`).
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_answer_metrics.judging.prompt_set import EXAMPLE_INPUT
from langchain_answer_metrics.judging.prompts import unescape_data
from langchain_answer_metrics.judging.step_specs import REGISTERED_STEPS, StepSpec

SCHEMA_NAMES = ("ClaimList", "ClaimVerdicts", "AspectVerdict")
"""The built-in steps' schemas; a registered step's (:func:`toy_steps`) are known too."""

# Any lower-case tag: data is escaped, so a "<" in a prompt's user message opens a tag.
_SECTION_RE = re.compile(r"<([a-z][a-z0-9_]*)>\n?(.*?)\n?</\1>", re.DOTALL)


@dataclass(frozen=True)
class ToyStep:
    """How the toy judge answers a step registered with
    :func:`~langchain_answer_metrics.judging.prompt_set.register_step`.

    A step declares its toy rule on its own :class:`~.step_specs.StepSpec` (``toy_reply``,
    ``toy_marks``) and the toy judge reads it from there (:func:`toy_steps`); a rule
    registered here with :func:`register_toy_step` is for the steps whose rules were
    written in ``testing/`` before, and wins over the spec's.

    Attributes:
        schema_name: the name of the reply schema the step asks for.
        sections: the tags only this step's prompt has, to tell its json_mode requests
            apart (checked before the built-in steps').
        answer: the reply's JSON arguments, from the prompt's sections (un-escaped).

    Example:
        >>> register_toy_step(ToyStep("ToneVerdict", frozenset({"tone_guide"}),
        ...                           lambda sections: {"reason": "r", "tone": "neutral"}))
    """

    schema_name: str
    sections: frozenset[str]
    answer: Callable[[Mapping[str, str]], dict[str, Any]]


TOY_STEPS: dict[str, ToyStep] = {}
"""Toy steps registered here, by schema name (they win over a spec's own rule)."""


def register_toy_step(step: ToyStep) -> ToyStep:
    """Teach the toy judge (and the local test server's default responder) a step."""
    TOY_STEPS[step.schema_name] = step
    return step


@functools.cache
def _import_step_modules() -> None:
    """Import every module of ``judging.steps``: each registers its steps' specs when
    imported, so the toy judge (also alone in ``answer-metrics toy-judge``) knows every
    built-in step, the ones added after this module was written included."""
    from langchain_answer_metrics.judging import steps

    for module in pkgutil.iter_modules(steps.__path__):
        importlib.import_module(f"{steps.__name__}.{module.name}")


def _from_spec(spec: StepSpec) -> ToyStep | None:
    """The toy step a spec declares: its ``toy_reply``, else its ``dry_reply``."""
    if spec.toy_reply is not None:
        return ToyStep(spec.schema.__name__, spec.marks, spec.toy_reply)
    dry = spec.dry_reply
    if dry is None:
        return None
    return ToyStep(spec.schema.__name__, spec.marks, lambda sections: dry(None))


def toy_steps() -> dict[str, ToyStep]:
    """Every registered step the toy judge answers, by schema name: those of
    :data:`TOY_STEPS` first, then each :class:`~.step_specs.StepSpec`'s own rule (every
    step of ``judging.steps``, and a step registered by your own code before)."""
    _import_step_modules()
    found = dict(TOY_STEPS)
    for spec in list(REGISTERED_STEPS.values()):
        if spec.schema.__name__ not in found:
            step = _from_spec(spec)
            if step is not None:
                found[step.schema_name] = step
    return found


def is_known_schema(name: str | None) -> bool:
    """Whether the toy judge can answer ``name``: a built-in or registered step's."""
    return name in SCHEMA_NAMES or (name is not None and name in toy_steps())


def message_text(message: Mapping[str, Any]) -> str:
    """The text of an OpenAI-style message; content may be a string or a list of parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
    return ""


def unescape(text: str) -> str:
    """Undo the prompts' escaping of data (``&lt;``, ``&gt;``, ``&amp;``, ``&#x...;``)."""
    return unescape_data(text)


def parse_sections(text: str) -> dict[str, str]:
    """The XML-tagged data sections of one prompt, un-escaped, by tag name."""
    return {match.group(1): unescape(match.group(2)) for match in _SECTION_RE.finditer(text)}


def prompt_sections(messages: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Sections from the user messages that are not few-shot examples, later ones winning.

    Merging (rather than reading only the last message) keeps re-ask turns working: the
    re-ask message has no sections, the original prompt before it does. Example inputs
    (``Example input:`` messages) are left out, so an example's ``<question>`` never
    stands in for a question the data does not have.
    """
    sections: dict[str, str] = {}
    for message in messages:
        if message.get("role") != "user":
            continue
        text = message_text(message)
        if not text.startswith(EXAMPLE_INPUT):
            sections.update(parse_sections(text))
    return sections


# The tags that mark each built-in step's prompt, as ToyStep.sections do a registered one's.
_BUILTIN_SECTIONS = {
    "ClaimVerdicts": frozenset({"claims", "source"}),
    "AspectVerdict": frozenset({"criterion", "response"}),
    "ClaimList": frozenset({"text"}),
}


def guess_schema(messages: Sequence[Mapping[str, Any]]) -> str | None:
    """Which judge step a prompt belongs to, from its sections (for json_mode / plain text):
    of the steps whose marking tags the prompt has, the one with the most (built-in steps
    and registered toy steps alike; a registered step wins a tie)."""
    present = prompt_sections(messages).keys()
    marks = [(step.sections, name) for name, step in toy_steps().items()]
    marks += [(tags, name) for name, tags in _BUILTIN_SECTIONS.items()]
    matching = [
        (len(tags), -order, name) for order, (tags, name) in enumerate(marks) if tags <= present
    ]
    return max(matching)[2] if matching else None


def schema_name_for_request(body: Mapping[str, Any]) -> str | None:
    """The schema an OpenAI chat-completions request asks for.

    Taken from the forced tool (``tool_choice``), else the only/first tool, else the
    ``response_format`` json_schema name, else guessed from the prompt sections.
    """
    tool_choice = body.get("tool_choice")
    if isinstance(tool_choice, Mapping):
        name = (tool_choice.get("function") or {}).get("name")
        if isinstance(name, str):
            return name
    tools = body.get("tools")
    if isinstance(tools, list) and tools and isinstance(tools[0], Mapping):
        name = (tools[0].get("function") or {}).get("name")
        if isinstance(name, str):
            return name
    response_format = body.get("response_format")
    if isinstance(response_format, Mapping) and response_format.get("type") == "json_schema":
        name = (response_format.get("json_schema") or {}).get("name")
        if isinstance(name, str):
            return name
    messages = body.get("messages")
    return guess_schema(messages) if isinstance(messages, list) else None
