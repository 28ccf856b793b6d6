"""An agent's trajectory as compact, numbered text for a judge, within a budget.

Every message and every tool call is one numbered step, one line each (a text's own
lines follow, indented, so nothing in a text can start a step of its own)::

    [1] user: What is the weather in Paris?
    [2] assistant calls get_weather({"city": "Paris"})
    [3] tool get_weather (for step 2) returned: {"temp_c": 18}
    [4] assistant: It is 18 °C in Paris.

The budget, so that a long trajectory cannot blow up the prompt:

- each tool result is cut to ``tool_result_chars`` characters (default
  :data:`TOOL_RESULT_CHARS`), every other text (a message, a call's arguments) to
  :data:`TEXT_CHARS`; a cut text ends with ``[… N more characters cut]``;
- if the steps still exceed ``max_chars`` (default :data:`MAX_CHARS`), the first and
  the last steps are kept (the task and the outcome) and the middle ones are left out,
  replaced by one line that counts them and their calls per tool
  (``[… steps 41 to 160 left out: 120 steps, 80 tool calls: get_weather ×60, search ×20]``).

What was cut is in :class:`ShownTrajectory`, which the judged agent metrics put in their
details. The text is judged data: the step escapes it like any other.

It reads an agent sample's normalised messages (``AgentSample.messages``: the three
message forms read into one).

Example:
    >>> text = render_trajectory(AgentSample(messages=[
    ...     {"role": "user", "content": "Weather in Paris?"},
    ...     {"role": "assistant", "tool_calls": [
    ...         {"name": "get_weather", "args": {"city": "Paris"}, "id": "c1"}]},
    ...     {"role": "tool", "tool_call_id": "c1", "content": "18 C"},
    ...     {"role": "assistant", "content": "It is 18 C."},
    ... ]).messages).text
    >>> print(text.splitlines()[2])
    [3] tool get_weather (for step 2) returned: 18 C
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import Field

from langchain_answer_metrics.core.result import DetailsModel

TOOL_RESULT_CHARS = 1000
"""The default budget of one tool result, in characters."""
TEXT_CHARS = 2000
"""The budget of any other text of a step (a message, a call's arguments), in characters."""
MAX_CHARS = 24_000
"""The default budget of the whole trajectory, in characters (about 6,000 tokens)."""
_GAP_RESERVE = 400  # room kept for the line that stands for the steps left out


class CutText(DetailsModel):
    """A text shown in part: its step, what it is, its length and how much was shown."""

    step: int
    what: str
    chars: int
    shown: int


OUTLINE_CHARS = 160
"""The most characters of one step in a trajectory's outline (the report's view)."""
OUTLINE_STEPS = 40
"""The most steps an outline keeps: the first and last halves of a longer trajectory."""


class StepLine(DetailsModel):
    """One step of a trajectory's outline: its number and its line, cut short."""

    number: int
    text: str


class ShownTrajectory(DetailsModel):
    """What the judge was shown of a trajectory, and what was cut to fit the budget.

    Attributes:
        steps: how many steps the trajectory has (messages and tool calls).
        tool_calls: how many tool calls it has.
        chars: the length of the text the judge was shown.
        tool_result_chars: the budget of one tool result.
        max_chars: the budget of the whole trajectory.
        cut: the texts shown in part.
        left_out: the first and last step left out to fit ``max_chars`` (none: all shown).
        outline: the steps, one short line each (:data:`OUTLINE_CHARS`), for a reader:
            all of them, or the first and last :data:`OUTLINE_STEPS` halves of a longer
            trajectory (the report shows it, with the steps the judge faults marked).
    """

    absent_when_none = frozenset({"left_out"})
    steps: int
    tool_calls: int
    chars: int
    tool_result_chars: int
    max_chars: int
    cut: list[CutText] = Field(default_factory=list)
    left_out: tuple[int, int] | None = None
    outline: list[StepLine] = Field(default_factory=list)


@dataclass(frozen=True)
class RenderedTrajectory:
    """The trajectory's text for the judge and what it shows (:class:`ShownTrajectory`)."""

    text: str
    view: ShownTrajectory


class ToolCallLike(Protocol):
    """A tool call as an agent sample's messages hold it (``agents.ToolCall``)."""

    @property
    def name(self) -> str: ...
    @property
    def args(self) -> dict[str, Any] | None: ...
    @property
    def arguments_text(self) -> str | None: ...
    @property
    def id(self) -> str | None: ...


class MessageLike(Protocol):
    """A message as an agent sample holds it (``agents.AgentMessage``)."""

    @property
    def role(self) -> str: ...
    @property
    def content(self) -> str: ...
    @property
    def tool_calls(self) -> Sequence[ToolCallLike]: ...
    @property
    def tool_call_id(self) -> str | None: ...
    @property
    def name(self) -> str | None: ...


@dataclass
class _Step:
    number: int
    head: str
    body: str
    tool: str | None = None  # the tool a call step calls

    def line(self) -> str:
        # A text's own lines are indented: only a step starts a line with "[n]".
        body = self.body.replace("\r\n", "\n").replace("\n", "\n    ")
        return f"[{self.number}] {self.head}{body}"


class _Builder:
    def __init__(self, tool_result_chars: int) -> None:
        self.steps: list[_Step] = []
        self.cut: list[CutText] = []
        self.tool_result_chars = tool_result_chars
        self.call_steps: dict[str, tuple[int, str]] = {}

    def _shown(self, text: str, what: str, limit: int) -> str:
        if len(text) <= limit:
            return text
        number = len(self.steps) + 1
        self.cut.append(CutText(step=number, what=what, chars=len(text), shown=limit))
        return f"{text[:limit]} [… {len(text) - limit:,} more characters cut]"

    def add(self, head: str, text: str, what: str, limit: int) -> None:
        body = self._shown(text, what, limit)
        self.steps.append(_Step(len(self.steps) + 1, head, body))

    def message(self, message: MessageLike) -> None:
        if message.role == "tool":
            call = self.call_steps.get(message.tool_call_id or "")
            name = message.name or (call[1] if call else "")
            origin = f" (for step {call[0]})" if call else ""
            head = f"tool {name}{origin} returned: " if name else f"tool{origin} returned: "
            self.add(head, message.content, "tool result", self.tool_result_chars)
            return
        if message.content.strip() or message.role != "assistant":
            role = message.role
            self.add(f"{role}: ", message.content, f"{role} message", TEXT_CHARS)
        for made in message.tool_calls if message.role == "assistant" else ():
            self.call(made)

    def call(self, call: ToolCallLike) -> None:
        if call.args is not None:
            arguments, note = json.dumps(call.args, ensure_ascii=False, default=str), ""
        else:
            arguments, note = call.arguments_text or "", " (arguments not valid JSON)"
        arguments = self._shown(arguments, "arguments", TEXT_CHARS)
        number = len(self.steps) + 1
        self.steps.append(
            _Step(number, f"assistant calls {call.name}({arguments}){note}", "", call.name)
        )
        if call.id:
            self.call_steps[call.id] = (number, call.name)


def _gap_line(left_out: Sequence[_Step]) -> str:
    calls = Counter(step.tool for step in left_out if step.tool is not None)
    listed = ", ".join(f"{name or '?'} ×{count}" for name, count in calls.most_common(10))
    if len(calls) > 10:
        listed += f" and {len(calls) - 10} more tools"
    counted = f", {sum(calls.values())} tool calls: {listed}" if calls else ", no tool calls"
    first, last = left_out[0].number, left_out[-1].number
    return f"[… steps {first} to {last} left out: {len(left_out)} steps{counted}]"


def _fitted(steps: list[_Step], max_chars: int) -> tuple[list[str], tuple[int, int] | None]:
    """The step lines within ``max_chars``: all of them, or the first and last ones
    around one line standing for the middle ones left out."""
    lines = [step.line() for step in steps]
    if sum(len(line) + 1 for line in lines) <= max_chars:
        return lines, None
    budget = max_chars - _GAP_RESERVE
    head, tail, used = 0, 0, 0
    # The task and the outcome first, then alternately from each end while they fit.
    for from_start in [True, False] * len(lines):
        if head + tail >= len(lines):
            break
        index = head if from_start else len(lines) - 1 - tail
        if used + len(lines[index]) + 1 > budget:
            if head and tail:
                break
            continue
        used += len(lines[index]) + 1
        head, tail = (head + 1, tail) if from_start else (head, tail + 1)
    left_out = steps[head : len(steps) - tail]
    gap = _gap_line(left_out)
    kept = [*lines[:head], gap, *lines[len(lines) - tail :]]
    return kept, (left_out[0].number, left_out[-1].number)


def _outline(steps: Sequence[_Step]) -> list[StepLine]:
    half = OUTLINE_STEPS // 2
    kept = steps if len(steps) <= OUTLINE_STEPS else [*steps[:half], *steps[-half:]]
    lines = []
    for step in kept:
        line = " ".join(f"{step.head}{step.body}".split())  # one line: whitespace folded
        if len(line) > OUTLINE_CHARS:
            line = line[: OUTLINE_CHARS - 1] + "…"
        lines.append(StepLine(number=step.number, text=line))
    return lines


def render_trajectory(
    messages: Sequence[MessageLike],
    *,
    tool_result_chars: int = TOOL_RESULT_CHARS,
    max_chars: int = MAX_CHARS,
) -> RenderedTrajectory:
    """``messages`` as numbered steps within the budget (see the module's docstring)."""
    builder = _Builder(tool_result_chars)
    for message in messages:
        builder.message(message)
    lines, left_out = _fitted(builder.steps, max_chars)
    text = "\n".join(lines)
    view = ShownTrajectory(
        steps=len(builder.steps),
        tool_calls=sum(step.tool is not None for step in builder.steps),
        chars=len(text),
        tool_result_chars=tool_result_chars,
        max_chars=max_chars,
        cut=builder.cut,
        left_out=left_out,
        outline=_outline(builder.steps),
    )
    return RenderedTrajectory(text=text, view=view)


__all__ = [
    "MAX_CHARS",
    "OUTLINE_CHARS",
    "OUTLINE_STEPS",
    "TEXT_CHARS",
    "TOOL_RESULT_CHARS",
    "CutText",
    "MessageLike",
    "RenderedTrajectory",
    "ShownTrajectory",
    "StepLine",
    "ToolCallLike",
    "render_trajectory",
]
