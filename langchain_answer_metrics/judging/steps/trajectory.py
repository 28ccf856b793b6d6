"""The trajectory steps: the user's task + the agent's trajectory (+ a reference
trajectory) -> a reason naming the step at fault, that step's number, then a verdict,
``votes`` independent times.

- ``judge_trajectory``: PASS or FAIL (:class:`TrajectoryVerdict`);
- ``judge_trajectory_scale``: a level of the user's scale, described in ``<levels>``
  (:class:`TrajectoryScaleVerdict`, narrowed to the levels with
  :func:`~.custom.verdict_schema`).

Both are registered with :func:`~langchain_answer_metrics.judging.prompt_set.register_step`
(custom prompts use ``{task}``, ``{trajectory}``, optionally ``{reference_trajectory}``,
and the scale's ``{levels}``); the dry run and the toy judge answer them from their
specs (:func:`~.agent_toy.toy_trajectory`). A step knows nothing of the metrics that use it.

    >>> TrajectoryVerdict.model_validate(
    ...     {"reason": "r", "faulted_step": "step 4", "verdict": "fail"}).faulted_step
    4
"""

from __future__ import annotations

import re
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, Field, field_validator

from langchain_answer_metrics.judging.judges import Judge
from langchain_answer_metrics.judging.prompt_set import StepPrompt, register_step
from langchain_answer_metrics.judging.prompts import DATA_RULE, StepVariables
from langchain_answer_metrics.judging.step_specs import StepSpec
from langchain_answer_metrics.judging.steps.agent_goal import pass_fail_label
from langchain_answer_metrics.judging.steps.agent_toy import toy_trajectory
from langchain_answer_metrics.judging.steps.custom import ScaleVerdict
from langchain_answer_metrics.judging.steps.intent import StepIntent
from langchain_answer_metrics.judging.steps.voting import Vote, ask_votes

PASS_FAIL_STEP = "judge_trajectory"
SCALE_STEP = "judge_trajectory_scale"
_STEP_NUMBER = re.compile(r"^\s*\[?(?:step\s*|шаг\s*|第)?\s*(\d+)", re.IGNORECASE)
_NO_STEP = {"", "none", "null", "n/a", "-", "nan", "0"}


def step_number(value: Any) -> Any:
    """The faulted step as a model may write it: 4, 4.0, "4", "step 4", "[4]", "第4步";
    none at all as None ("none", "null", "", 0)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value if value > 0 else None
    if isinstance(value, str):
        if value.strip().strip(".").lower() in _NO_STEP:
            return None
        found = _STEP_NUMBER.match(value)
        return int(found.group(1)) if found else value
    return value


class TrajectoryVerdict(BaseModel):
    """Whether the path is sensible and efficient, and where it goes wrong."""

    reason: str = Field(
        description="In the language of the user's task: what is wrong or right with the "
        'path, naming the step at fault by its number ("step 4 repeats step 2").'
    )
    faulted_step: int | None = Field(
        default=None, description="The number of the first step at fault; null if none."
    )
    verdict: Literal["PASS", "FAIL"] = Field(
        description="PASS if the path is sensible and efficient, otherwise FAIL."
    )

    @field_validator("faulted_step", mode="before")
    @classmethod
    def _tolerant_step(cls, value: Any) -> Any:
        return step_number(value)

    @field_validator("verdict", mode="before")
    @classmethod
    def _tolerant_label(cls, value: Any) -> Any:
        return pass_fail_label(value)


class TrajectoryScaleVerdict(BaseModel):
    """A level of the scale for the path, and the first step at fault."""

    reason: str = Field(
        description="In the language of the user's task: why this level and not its "
        'neighbours, naming the step at fault by its number ("step 4 repeats step 2").'
    )
    faulted_step: int | None = Field(
        default=None, description="The number of the first step at fault; null if none."
    )
    verdict: int = Field(description="The level (an integer).")

    @field_validator("faulted_step", mode="before")
    @classmethod
    def _tolerant_step(cls, value: Any) -> Any:
        return step_number(value)

    @field_validator("verdict", mode="before")
    @classmethod
    def _tolerant_level(cls, value: Any) -> Any:
        # As a scale's level is read (ScaleVerdict): 4, 4.0, "4", " 4. ", "Level 4".
        return ScaleVerdict.model_validate({"reason": "", "verdict": value}).verdict


_RULES = """- The trajectory lists the agent's steps in order, numbered [1], [2]...: messages,
  tool calls with their arguments, and what each tool returned.
- A good path serves the task at every step: the right tool for each need, arguments
  that fit the request, no needless call, no call repeated with the same arguments
  without a reason, and each tool result read and used correctly in what follows.
- Faults: a wrong tool, wrong or made-up arguments, a needless or repeated call, a loop,
  a tool result ignored or misread, an answer the tool results do not support.
- With a reference trajectory: it shows one good path. Another path that serves the
  task as directly is fine; missing a call the task needs, or taking clearly more
  steps, is a fault.
- Judge the path, not only the final answer.
- "[… N more characters cut]" and "[… steps … left out …]" mark text shortened for you:
  never count the cut against the agent; the left-out line counts the calls it hides.
- First a short reason, in the language of the user's task, that names the step at
  fault by its number; then faulted_step, the number of the first step at fault (null
  if none); then {verdict}.
- {data_rule}"""

_PASS_FAIL_RULES = _RULES.format(
    verdict="the verdict: PASS only if no step is at fault", data_rule=DATA_RULE
)
_SCALE_RULES = _RULES.format(
    verdict="the level (its number) whose description fits the path best", data_rule=DATA_RULE
)

TRAJECTORY_SYSTEM = f"""You judge whether an AI agent's trajectory is a sensible and efficient
path to the user's task. Answer PASS or FAIL.

<rules>
{_PASS_FAIL_RULES}
</rules>"""

TRAJECTORY_SCALE_SYSTEM = f"""You rate how sensible and efficient an AI agent's trajectory is as
a path to the user's task, on a scale whose levels are described in <levels>.

<rules>
{_SCALE_RULES}
</rules>"""

TRAJECTORY_USER = """Is the agent's trajectory a sensible and efficient path to the task?

{task}
{trajectory}{reference_trajectory}"""

TRAJECTORY_SCALE_USER = """Rate the agent's trajectory as a path to the task.

{levels}
{task}
{trajectory}{reference_trajectory}"""

TRAJECTORY_EXAMPLES: tuple[dict[str, Any], ...] = (
    {
        "input": {
            "task": "What is the weather in Paris?",
            "trajectory": "[1] user: What is the weather in Paris?\n"
            '[2] assistant calls get_weather({"city": "Paris"})\n'
            '[3] tool get_weather (for step 2) returned: {"temp_c": 18, "sky": "clear"}\n'
            '[4] assistant calls get_weather({"city": "Paris"})\n'
            '[5] tool get_weather (for step 4) returned: {"temp_c": 18, "sky": "clear"}\n'
            "[6] assistant: It is 18 °C and clear in Paris.",
        },
        "output": {
            "reason": "Step 4 repeats the call of step 2 with the same arguments; its "
            "result was already known from step 3.",
            "faulted_step": 4,
            "verdict": "FAIL",
        },
    },
    {
        "input": {
            "task": "Сколько будет 17% от 2300?",
            "trajectory": "[1] user: Сколько будет 17% от 2300?\n"
            '[2] assistant calls calculator({"expression": "0.17 * 2300"})\n'
            "[3] tool calculator (for step 2) returned: 391\n"
            "[4] assistant: 17% от 2300 — это 391.",
        },
        "output": {
            "reason": "Один нужный вызов на шаге 2, и результат шага 3 передан верно.",
            "faulted_step": None,
            "verdict": "PASS",
        },
    },
    {
        "input": {
            "task": "查一下订单 5521 的物流状态。",
            "trajectory": "[1] user: 查一下订单 5521 的物流状态。\n"
            '[2] assistant calls search_web({"query": "订单 5521 物流"})\n'
            '[3] tool search_web (for step 2) returned: "没有相关结果"\n'
            "[4] assistant: 您的订单正在配送中。",
            "reference_trajectory": '[1] assistant calls get_order_status({"order_id": 5521})',
        },
        "output": {
            "reason": "第2步用了网页搜索而不是订单查询工具；第4步的回答也不符合第3步的结果。",
            "faulted_step": 2,
            "verdict": "FAIL",
        },
    },
)
"""The default few-shot examples: a repeated call (EN), a direct path (RU), the wrong tool
against a reference trajectory (ZH)."""

_VARIABLES = StepVariables(required=("task", "trajectory"), optional=("reference_trajectory",))

TRAJECTORY_STEP = register_step(
    StepSpec(
        name=PASS_FAIL_STEP,
        schema=TrajectoryVerdict,
        system=TRAJECTORY_SYSTEM,
        user=TRAJECTORY_USER,
        # task: the user's task; trajectory: the numbered steps; reference_trajectory: the
        # expected path (its calls, or its messages), when the sample has one.
        variables=_VARIABLES,
        examples=TRAJECTORY_EXAMPLES,
        version=1,
        dry_reply=lambda intent: {"reason": "dry run", "faulted_step": None, "verdict": "PASS"},
        toy_reply=toy_trajectory,
    )
)

TRAJECTORY_SCALE_STEP = register_step(
    StepSpec(
        name=SCALE_STEP,
        schema=TrajectoryScaleVerdict,
        system=TRAJECTORY_SCALE_SYSTEM,
        user=TRAJECTORY_SCALE_USER,
        variables=StepVariables(
            required=("levels", "task", "trajectory"), optional=("reference_trajectory",)
        ),
        version=1,
        # The dry run answers the top level of the scale the step asked about.
        dry_reply=lambda intent: {
            "reason": "dry run",
            "faulted_step": None,
            "verdict": int(intent.items[-1]) if intent and intent.items else 1,
        },
        toy_reply=toy_trajectory,
    )
)


async def judge_trajectory(
    judge: Judge,
    *,
    task: str,
    trajectory: str,
    prompt: StepPrompt,
    schema: type[BaseModel] = TrajectoryVerdict,
    step: str = PASS_FAIL_STEP,
    reference_trajectory: str | None = None,
    levels: str | None = None,
    choices: tuple[str, ...] = (),
    votes: int = 1,
    config: RunnableConfig | None = None,
) -> list[Vote[Any]]:
    """A verdict on ``trajectory`` (numbered steps) as a path to ``task``, ``votes``
    independent times: PASS/FAIL (``judge_trajectory``), or a level of ``levels`` with
    ``step="judge_trajectory_scale"`` and its narrowed ``schema``.

    Example:
        >>> votes = await judge_trajectory(judge, task="Weather?", trajectory=text,
        ...                                prompt=DEFAULT_STEP_PROMPTS["judge_trajectory"])
        >>> votes[0].parsed.faulted_step
        4
    """
    values = {
        "task": task,
        "trajectory": trajectory,
        "reference_trajectory": reference_trajectory,
        "levels": levels,
    }
    return await ask_votes(
        judge,
        step=step,
        schema=schema,
        prompt=prompt,
        values=values,
        votes=votes,
        intent=StepIntent(step=step, text=task, response=trajectory, items=choices),
        trace_input={name: value for name, value in values.items() if value is not None},
        config=config,
    )


__all__ = [
    "PASS_FAIL_STEP",
    "SCALE_STEP",
    "TRAJECTORY_SCALE_STEP",
    "TRAJECTORY_STEP",
    "TrajectoryScaleVerdict",
    "TrajectoryVerdict",
    "judge_trajectory",
    "step_number",
]
