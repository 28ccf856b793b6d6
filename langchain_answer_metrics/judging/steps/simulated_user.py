"""The simulated user's step: a persona, a goal and the conversation so far -> a reason,
whether the goal is reached, and the user's next message.

The user model is asked like a judge (the one structured-output mechanism, tolerant
replies, re-asks), so a small model that wraps its JSON in prose still plays its part.
The conversation so far is judged data: tagged and escaped, so nothing the app replies
becomes an instruction to the simulated user. Registered with
:func:`~langchain_answer_metrics.judging.prompt_set.register_step` as
``simulate_user``: a custom prompt (``{persona}``, ``{goal}``, ``{conversation}``) is
checked against it, and the toy judge answers it with :func:`toy_user`.

    >>> toy_user({"goal": "Book a table for two", "conversation": ""})["message"]
    'Book a table for two'
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from langchain_answer_metrics.judging.prompt_set import register_step
from langchain_answer_metrics.judging.prompts import DATA_RULE, StepVariables
from langchain_answer_metrics.judging.step_specs import StepSpec
from langchain_answer_metrics.judging.steps.intent import StepIntent

SIMULATE_USER = "simulate_user"


class SimulatedUserTurn(BaseModel):
    """The simulated user's next move (reason first: models write in order)."""

    reason: str = Field(description="One sentence: what the assistant has done toward the goal.")
    goal_reached: bool = Field(
        description="True once the assistant has fully achieved the goal; then no message."
    )
    message: str = Field(
        default="", description="The user's next message, in the persona's words and language."
    )


SYSTEM = f"""You play a user talking to an AI assistant, to test the assistant.

<rules>
- <persona> says who you are and how you write; <goal> what you want from the assistant.
- <conversation> is the conversation so far ("user:" is you, "assistant:" the assistant);
  it is empty before your first message.
- First a one-sentence reason: what the assistant has done toward your goal so far.
- If the assistant has fully achieved your goal, set goal_reached to true and leave the
  message empty. Otherwise write your next message: one short, natural message that moves
  toward the goal, answers what the assistant asked, or points out what it got wrong.
- Stay in your persona and its language; never say that you are simulated or an AI.
- {DATA_RULE}
</rules>"""

USER = """Write your next move.

{persona}
{goal}
{conversation}"""


def render_so_far(messages: Sequence[tuple[str, str]]) -> str:
    """The conversation so far as ``user:`` / ``assistant:`` lines (a text's own lines
    indented, so nothing in a reply can start a line of its own)."""
    return "\n".join(f"{role}: {text.replace(chr(10), chr(10) + '  ')}" for role, text in messages)


_WORD = re.compile(r"[^\W\d_]{4,}|[\u3400-\u9fff]")


def _stems(text: str) -> set[str]:
    return {word[:5] for word in _WORD.findall(text.lower())}


def toy_user(sections: Mapping[str, str]) -> dict[str, Any]:
    """The toy judge's user: asks for its goal, and is satisfied once the assistant's last
    reply shares half the goal's word stems. A plausible rule, never a judgment."""
    goal = sections.get("goal", "").strip()
    lines = [line for line in sections.get("conversation", "").splitlines() if line]
    replies = [line[len("assistant: ") :] for line in lines if line.startswith("assistant: ")]
    if not replies:
        return {"reason": "Nothing asked yet.", "goal_reached": False, "message": goal}
    wanted = _stems(goal)
    met = len(wanted & _stems(replies[-1])) * 2 >= max(1, len(wanted))
    if met:
        return {"reason": "The last reply covers the goal.", "goal_reached": True, "message": ""}
    return {
        "reason": "The last reply does not cover the goal.",
        "goal_reached": False,
        "message": f"That is not what I need. {goal}",
    }


def _dry_reply(intent: StepIntent | None) -> dict[str, Any]:
    return {"reason": "dry run", "goal_reached": False, "message": "dry run"}


SIMULATE_USER_STEP = register_step(
    StepSpec(
        name=SIMULATE_USER,
        schema=SimulatedUserTurn,
        system=SYSTEM,
        user=USER,
        # persona and goal: the scenario's; conversation: the exchange so far (data).
        variables=StepVariables(required=("persona", "goal", "conversation")),
        dry_reply=_dry_reply,
        toy_reply=toy_user,
    )
)
