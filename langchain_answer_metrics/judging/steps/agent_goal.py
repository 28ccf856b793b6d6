"""The agent goal step: the user's goal + the agent's trajectory (+ the expected outcome)
-> a reason, then PASS or FAIL, ``votes`` independent times.

Registered with :func:`~langchain_answer_metrics.judging.prompt_set.register_step` as
``judge_agent_goal``: custom prompts (``prompts={"judge_agent_goal": ...}``, using
``{goal}``, ``{trajectory}`` and optionally ``{expected_outcome}``) and examples are checked
against it, the cost estimate's dry run answers it, and the toy judge answers it with the
rule declared here (:func:`~.agent_toy.toy_goal`). The trajectory arrives as numbered steps
(:mod:`~langchain_answer_metrics.judging.trajectory_text`), tool results included, tagged
and escaped like any judged text. A step knows nothing of the metrics that use it.

    >>> GoalVerdict.model_validate({"reason": "r", "verdict": " Pass. "}).verdict
    'PASS'
"""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, Field, field_validator

from langchain_answer_metrics.judging.judges import Judge
from langchain_answer_metrics.judging.prompt_set import (
    DEFAULT_STEP_PROMPTS,
    StepPrompt,
    register_step,
)
from langchain_answer_metrics.judging.prompts import DATA_RULE, StepVariables
from langchain_answer_metrics.judging.step_specs import StepSpec
from langchain_answer_metrics.judging.steps.agent_toy import toy_goal
from langchain_answer_metrics.judging.steps.intent import StepIntent
from langchain_answer_metrics.judging.steps.voting import Vote, ask_votes

STEP = "judge_agent_goal"


def pass_fail_label(value: Any) -> Any:
    """PASS or FAIL as a model may write it: any case, padded, one final "." aside."""
    if not isinstance(value, str):
        return value
    label = value.strip()
    return (label[:-1].rstrip() if label.endswith(".") else label).upper()


class GoalVerdict(BaseModel):
    """Whether the agent achieved the user's goal (reason first: models write in order)."""

    reason: str = Field(
        description="In the language of the user's goal: what the user wanted, what the "
        "agent achieved by its last step (citing step numbers), and whether that matches."
    )
    verdict: Literal["PASS", "FAIL"] = Field(
        description="PASS if the user's goal was achieved, otherwise FAIL."
    )

    @field_validator("verdict", mode="before")
    @classmethod
    def _tolerant_label(cls, value: Any) -> Any:
        return pass_fail_label(value)


GOAL_SYSTEM = f"""You judge whether an AI agent achieved its user's goal, from the agent's
whole trajectory. Answer PASS or FAIL.

<rules>
- The trajectory lists the agent's steps in order, numbered [1], [2]...: messages, tool
  calls with their arguments, and what each tool returned. The tool results are what
  really happened; the agent's last message is what the user got.
- PASS only if the user got what they asked for: every part of the goal is done or
  answered, and what the agent says agrees with the tool results.
- FAIL if the agent stopped early, gave up, answered another question, ended on an
  error, or claims a result or an action the tool results do not show.
- With an expected outcome: PASS only if the agent's outcome matches it in substance
  (the same facts, the same action done); the wording may differ.
- Judge the outcome, not the path: needless steps alone do not fail a goal.
- "[… N more characters cut]" and "[… steps … left out …]" mark text shortened for you:
  never count the cut against the agent.
- First a short reason that names the steps it rests on, in the language of the user's
  goal; then the verdict.
- {DATA_RULE}
</rules>"""

GOAL_USER = """Did the agent achieve the user's goal?

{goal}
{trajectory}{expected_outcome}"""

GOAL_EXAMPLES: tuple[dict[str, Any], ...] = (
    {
        "input": {
            "goal": "Book a table for two at Luigi's tonight at 8 pm.",
            "trajectory": "[1] user: Book a table for two at Luigi's tonight at 8 pm.\n"
            '[2] assistant calls book_table({"people": 2, "restaurant": "Luigi\'s", '
            '"time": "20:00"})\n'
            '[3] tool book_table (for step 2) returned: {"status": "confirmed", '
            '"time": "20:00", "people": 2}\n'
            "[4] assistant: Done: a table for two at Luigi's at 8 pm tonight is confirmed.",
        },
        "output": {
            "reason": "Step 3 confirms the booking the user asked for, and step 4 reports "
            "it correctly.",
            "verdict": "PASS",
        },
    },
    {
        "input": {
            "goal": "Какая сейчас погода в Москве?",
            "trajectory": "[1] user: Какая сейчас погода в Москве?\n"
            '[2] assistant calls get_weather({"city": "Москва"})\n'
            "[3] tool get_weather (for step 2) returned: error: timeout\n"
            "[4] assistant: В Москве солнечно, +20 °C.",
        },
        "output": {
            "reason": "Инструмент на шаге 3 не ответил, а ответ на шаге 4 выдуман: "
            "погода пользователю не известна.",
            "verdict": "FAIL",
        },
    },
    {
        "input": {
            "goal": "把这份报告翻译成英文并发给张伟。",
            "trajectory": "[1] user: 把这份报告翻译成英文并发给张伟。\n"
            '[2] assistant calls translate({"target": "en"})\n'
            '[3] tool translate (for step 2) returned: "Quarterly report: sales rose 8%."\n'
            "[4] assistant: 报告已翻译成英文：Quarterly report: sales rose 8%.",
        },
        "output": {
            "reason": "第3步完成了翻译，但代理从未调用发送邮件的工具，报告没有发给张伟。",
            "verdict": "FAIL",
        },
    },
    {
        "input": {
            "goal": "Refund my order 1182.",
            "trajectory": "[1] user: Refund my order 1182.\n"
            '[2] assistant calls refund({"amount": 25, "order": 1182})\n'
            '[3] tool refund (for step 2) returned: {"refunded": 25}\n'
            "[4] assistant: Your order 1182 has been refunded.",
            "expected_outcome": "The full $40 of order 1182 is refunded.",
        },
        "output": {
            "reason": "Step 3 refunds $25, not the full $40 expected; step 4 hides the difference.",
            "verdict": "FAIL",
        },
    },
)
"""The default few-shot examples: a goal done (EN), an answer the tools do not back (RU),
half a goal (ZH), an outcome short of the expected one (EN)."""

GOAL_STEP = register_step(
    StepSpec(
        name=STEP,
        schema=GoalVerdict,
        system=GOAL_SYSTEM,
        user=GOAL_USER,
        # goal: the user's task; trajectory: the numbered steps; expected_outcome: the
        # sample's reference, when it has one.
        variables=StepVariables(required=("goal", "trajectory"), optional=("expected_outcome",)),
        examples=GOAL_EXAMPLES,
        version=1,
        dry_reply=lambda intent: {"reason": "dry run", "verdict": "PASS"},
        toy_reply=toy_goal,
    )
)


async def judge_agent_goal(
    judge: Judge,
    *,
    goal: str,
    trajectory: str,
    expected_outcome: str | None = None,
    votes: int = 1,
    prompt: StepPrompt | None = None,
    config: RunnableConfig | None = None,
) -> list[Vote[GoalVerdict]]:
    """PASS or FAIL: did the ``trajectory`` (numbered steps) achieve ``goal``, ``votes``
    independent times (asked as every voting step asks them: :func:`~.voting.ask_votes`).

    Example:
        >>> [vote.parsed.verdict for vote in await judge_agent_goal(
        ...     judge, goal="Weather in Paris?", trajectory="[1] user: ...\\n[4] assistant: 18 °C")]
        ['PASS']
    """
    values = {"goal": goal, "trajectory": trajectory, "expected_outcome": expected_outcome}
    return await ask_votes(
        judge,
        step=STEP,
        schema=GoalVerdict,
        prompt=prompt or DEFAULT_STEP_PROMPTS[STEP],
        values=values,
        votes=votes,
        intent=StepIntent(step=STEP, text=goal, response=trajectory),
        trace_input={name: value for name, value in values.items() if value is not None},
        config=config,
    )


__all__ = ["GOAL_STEP", "STEP", "GoalVerdict", "judge_agent_goal", "pass_fail_label"]
