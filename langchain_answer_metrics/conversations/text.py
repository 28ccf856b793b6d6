"""A conversation as compact, numbered text for a judge, within a budget.

Each assistant turn is a block that opens with its number; the user's message, the
tools the assistant called with what they returned, and the reply follow, indented
(a text's own lines are indented further, so nothing in a text can open a turn)::

    Turn 1
      user: I'm vegetarian. A hotel in Rome?
      assistant called search_hotels({"city": "Rome"}) -> Hotel Roma, vegetarian menu
      assistant: Hotel Roma has a vegetarian menu.
    Turn 2
      user: And a restaurant?
      assistant: Try Il Margutta.

The budget, so that a long thread cannot blow up the prompt:

- with a ``window`` of k, the last k turns are shown whole and judged; the earlier ones
  are shown in part (the user's message and the reply, each cut to
  :data:`OUTSIDE_WINDOW_CHARS`), as the context the judged turns rest on;
- each tool result is cut to :data:`TOOL_RESULT_CHARS`, each message to
  :data:`TEXT_CHARS`; a cut text ends with ``[… N more characters cut]``;
- past ``max_chars`` (:data:`MAX_CHARS`) the oldest turns outside the judged ones are
  cut further, to their user message alone, and then left out in one line that counts
  them. The judged turns are never cut.

:class:`ConversationView` says which turns the judge saw whole, in part, or not at all;
the conversation metrics put it in their details. The text is judged data: the step
escapes it like any other.

Example:
    >>> view = render_conversation(ConversationSample(messages=[
    ...     {"role": "user", "content": "Hi, I'm Ann."},
    ...     {"role": "assistant", "content": "Hello Ann!"}]).turns)
    >>> print(view.text)
    Turn 1
      user: Hi, I'm Ann.
      assistant: Hello Ann!
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import Field

from langchain_answer_metrics.agents.messages import ToolCall
from langchain_answer_metrics.conversations.turns import Turn
from langchain_answer_metrics.core.result import DetailsModel

TOOL_RESULT_CHARS = 1000
"""The budget of one tool result, in characters."""
TEXT_CHARS = 4000
"""The budget of one message of a judged turn, in characters."""
OUTSIDE_WINDOW_CHARS = 300
"""The budget of a message of a turn outside the window, in characters."""
MAX_CHARS = 40_000
"""The default budget of the whole conversation, in characters (about 10,000 tokens)."""


class ConversationView(DetailsModel):
    """What the judge was shown of a conversation.

    Attributes:
        turns: how many assistant turns the thread has.
        judged: the turns judged, shown whole (all of them without a window).
        in_part: the turns shown in part, as context (outside the window, or cut to fit).
        left_out: the turns not shown at all, to fit ``max_chars`` (counted in one line).
        cut_texts: how many texts (messages, tool results) were cut to their budget.
        chars: the length of the text the judge was shown.
    """

    turns: int
    judged: list[int] = Field(default_factory=list)
    in_part: list[int] = Field(default_factory=list)
    left_out: list[int] = Field(default_factory=list)
    cut_texts: int = 0
    chars: int = 0


@dataclass(frozen=True)
class RenderedConversation:
    """The conversation's text for the judge, and what it shows."""

    text: str
    view: ConversationView


def _indented(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", "\n      ")


class _Cutter:
    def __init__(self) -> None:
        self.cut = 0

    def __call__(self, text: str, limit: int) -> str:
        if len(text) <= limit:
            return text
        self.cut += 1
        return f"{text[:limit]} [… {len(text) - limit:,} more characters cut]"


def _call_text(call: ToolCall) -> str:
    if call.args is not None:
        return json.dumps(call.args, ensure_ascii=False, default=str)
    return call.arguments_text or ""


def _block(turn: Turn, shown: _Cutter, *, whole: bool, user_only: bool = False) -> str:
    limit = TEXT_CHARS if whole else OUTSIDE_WINDOW_CHARS
    head = f"Turn {turn.index}" + ("" if whole else " (shown in part)")
    lines = [head, f"  user: {_indented(shown(turn.user, limit))}"]
    if user_only:
        return "\n".join(lines)
    if whole:
        for made in turn.tool_calls:
            arguments = shown(_call_text(made.call), TEXT_CHARS)
            result = made.result
            returned = "" if result is None else f" -> {shown(result, TOOL_RESULT_CHARS)}"
            lines.append(f"  assistant called {made.call.name}({arguments}){_indented(returned)}")
    elif turn.tool_calls:
        names = ", ".join(dict.fromkeys(made.call.name for made in turn.tool_calls))
        lines.append(f"  assistant called {len(turn.tool_calls)} tools ({names})")
    reply = turn.reply if turn.reply is not None else "(no reply: only tool calls)"
    lines.append(f"  assistant: {_indented(shown(reply, limit))}")
    return "\n".join(lines)


def render_conversation(
    turns: Sequence[Turn], *, window: int | None = None, max_chars: int = MAX_CHARS
) -> RenderedConversation:
    """``turns`` as numbered blocks within the budget (see the module's docstring);
    with ``window``, only the last ``window`` turns are whole (and judged)."""
    judged_from = 0 if not window else max(0, len(turns) - window)
    shown = _Cutter()
    judged = [_block(turn, shown, whole=True) for turn in turns[judged_from:]]
    earlier = list(turns[:judged_from])
    blocks = {turn.index: _block(turn, shown, whole=False) for turn in earlier}
    used = sum(len(block) + 1 for block in [*judged, *blocks.values()])
    left_out: list[int] = []
    for turn in earlier:  # oldest first: cut to the user's words, then leave out
        if used <= max_chars:
            break
        shorter = _block(turn, shown, whole=False, user_only=True)
        used -= len(blocks[turn.index]) - len(shorter)
        blocks[turn.index] = shorter
    for turn in earlier:
        if used <= max_chars:
            break
        used -= len(blocks.pop(turn.index)) + 1
        left_out.append(turn.index)
    lines = []
    if left_out:
        lines.append(
            f"[… turns {left_out[0]} to {left_out[-1]} left out to fit: {len(left_out)} turns]"
        )
    lines += [blocks[turn.index] for turn in earlier if turn.index in blocks]
    lines += judged
    text = "\n".join(lines)
    view = ConversationView(
        turns=len(turns),
        judged=[turn.index for turn in turns[judged_from:]],
        in_part=[turn.index for turn in earlier if turn.index in blocks],
        left_out=left_out,
        cut_texts=shown.cut,
        chars=len(text),
    )
    return RenderedConversation(text=text, view=view)
