"""The pairwise step: two answers to one question, shown in a given order -> which is better.

The judge sees the answer shown first as ``Answer A`` (``<answer_a>``) and the one shown
second as ``Answer B`` (``<answer_b>``), and names the better one by that position (``A``,
``B`` or ``tie``). Which response went first is the caller's business: a metric that asks
in both orders (:class:`~langchain_answer_metrics.metrics.pairwise.PairwisePreference`)
maps each positional verdict back to its response.

    >>> verdict = await judge_pair(judge, first="Paris.", second="Lyon.",
    ...                            question="Capital of France?", criterion=DEFAULT_CRITERION)
    >>> verdict.picked
    'A'
"""

from __future__ import annotations

import re
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, Field, field_validator

from langchain_answer_metrics.core.result import TokenUsage
from langchain_answer_metrics.judging.judges import Judge
from langchain_answer_metrics.judging.prompt_set import StepPrompt, register_step
from langchain_answer_metrics.judging.prompts import DATA_RULE, StepVariables, unescape_data
from langchain_answer_metrics.judging.step_specs import StepSpec
from langchain_answer_metrics.judging.steps.intent import StepIntent, asking
from langchain_answer_metrics.judging.structured import ask_structured
from langchain_answer_metrics.judging.tracing import step_run

STEP = "judge_pairwise"

Position = Literal["A", "B", "tie"]

# "Answer A" is how the prompt names it: a careful reader takes it for "A".
_ANSWER_PREFIX = re.compile(r"^answer\s+", re.IGNORECASE)


def _position(value: Any) -> Any:
    """``A``, ``B`` or ``tie`` as the schema spells it: any case, surrounding spaces, one
    final full stop and an ``Answer`` prefix aside. Anything else ("first", "A or B",
    "both") is left to fail validation: never guessed."""
    if not isinstance(value, str):
        return value
    label = value.strip()
    label = label[:-1].rstrip() if label.endswith(".") else label
    label = _ANSWER_PREFIX.sub("", label)
    if label.lower() == "tie":
        return "tie"
    return label.upper() if label.lower() in ("a", "b") else label


class PairwiseVerdict(BaseModel):
    """Which of the two answers shown is better: A (shown first), B (second) or a tie."""

    reason: str = Field(description="A short comparison of the two answers on the criterion.")
    verdict: Position = Field(description='"A", "B", or "tie" when neither is better.')

    @field_validator("verdict", mode="before")
    @classmethod
    def _verdict_label(cls, value: Any) -> Any:
        return _position(value)


DEFAULT_CRITERION = (
    "Which answer better answers the question: correct, complete and relevant, without "
    "padding; when a reference is given, agreeing with the reference."
)
"""What the answers are compared on when the metric is given no criterion."""

PAIRWISE_SYSTEM = f"""You compare two answers to the same question and say which is better.

<rules>
- Judge only on the criterion; the reference, when it is not empty, is a correct answer.
- The order the answers are shown in says nothing about their quality: Answer A is not
  better for being first. Length is not quality either.
- "tie" when neither is better on the criterion (both equally good or equally bad).
- First a short reason, in the language of the answers; then the verdict: A, B or tie.
- {DATA_RULE}
</rules>"""

PAIRWISE_USER = """Which answer is better on the criterion?

{criterion}
{question}{reference}
{answer_a}
{answer_b}"""

PAIRWISE_EXAMPLES: tuple[dict[str, Any], ...] = (
    {
        "input": {
            "criterion": DEFAULT_CRITERION,
            "question": "When did the Berlin Wall fall?",
            "answer_a": "It fell in 1991.",
            "answer_b": "On 9 November 1989.",
        },
        "output": {"reason": "B gives the right date; A's year is wrong.", "verdict": "B"},
    },
    {
        "input": {
            "criterion": DEFAULT_CRITERION,
            "question": "Столица Австралии?",
            "reference": "Канберра.",
            "answer_a": "Канберра.",
            "answer_b": "Столица Австралии — Канберра.",
        },
        "output": {"reason": "Оба ответа верны и полны.", "verdict": "tie"},
    },
    {
        "input": {
            "criterion": DEFAULT_CRITERION,
            "question": "水的沸点是多少？",
            "answer_a": "在标准大气压下，水的沸点是100摄氏度。",
            "answer_b": "水的沸点是50摄氏度。",
        },
        "output": {"reason": "A正确；B的温度错误。", "verdict": "A"},
    },
)

PAIRWISE_STEP = register_step(
    StepSpec(
        name=STEP,
        schema=PairwiseVerdict,
        system=PAIRWISE_SYSTEM,
        user=PAIRWISE_USER,
        # criterion: what the answers are compared on; answer_a / answer_b: the answers in
        # the order shown; question, reference: context (an empty reference means none).
        variables=StepVariables(
            required=("criterion", "answer_a", "answer_b"), optional=("question", "reference")
        ),
        examples=PAIRWISE_EXAMPLES,
        version=1,
        dry_reply=lambda intent: {"reason": "dry run", "verdict": "tie"},
    )
)


class PairVerdict(BaseModel):
    """One request's verdict: the position picked, why, and what the request spent."""

    picked: Position
    reason: str
    usage: TokenUsage


async def judge_pair(
    judge: Judge,
    *,
    first: str,
    second: str,
    criterion: str,
    question: str | None = None,
    reference: str | None = None,
    prompt: StepPrompt,
    side: str | None = None,
    config: RunnableConfig | None = None,
) -> PairVerdict:
    """Ask ``judge`` which of ``first`` (shown as Answer A) and ``second`` (Answer B) is
    better on ``criterion``; one request, traced as a ``judge_pairwise`` child run
    (tagged ``side:<side>`` when given)."""
    raw = {
        "criterion": criterion,
        "question": question,
        "reference": reference or "",
        "answer_a": first,
        "answer_b": second,
    }
    intent = StepIntent(step=STEP, criterion=criterion, items=(first, second))

    async def work(child: RunnableConfig) -> PairVerdict:
        with asking(intent):
            reply = await ask_structured(
                judge, schema=PairwiseVerdict, messages=prompt.messages(STEP, raw), config=child
            )
        return PairVerdict(
            picked=reply.parsed.verdict,
            reason=unescape_data(reply.parsed.reason),
            usage=reply.usage,
        )

    return await step_run(STEP, raw, work, config, side=side)
