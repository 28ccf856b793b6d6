"""Verdicts per turn (or per intent) of a conversation, asked in ONE request per thread.

A conversation step shows the judge the thread (:mod:`~..conversation_text`) and asks for
one verdict for each item it names, with the item's number as ``index`` (a turn's own
number, so a reason and a verdict name the turn at fault). A reply with more or fewer
verdicts than items is re-asked, never trimmed; one with a verdict per item but numbered
wrong (0-based, all 1, none) is taken in order and says so, as the claim and context
steps do.

    >>> in_turn_order([TurnVerdict(index=3, reason="r", verdict="x"),
    ...                TurnVerdict(index=2, reason="r", verdict="y")], [2, 3])
    ([TurnVerdict(index=2, ...), TurnVerdict(index=3, ...)], False)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, Field

from langchain_answer_metrics.judging.judges import Judge
from langchain_answer_metrics.judging.prompt_set import DEFAULT_STEP_PROMPTS, StepPrompt
from langchain_answer_metrics.judging.prompts import unescape_data
from langchain_answer_metrics.judging.steps.intent import StepIntent, asking
from langchain_answer_metrics.judging.structured import ask_structured
from langchain_answer_metrics.judging.tracing import step_run
from langchain_answer_metrics.result import DetailsModel, TokenUsage


def snake_label(value: Any) -> Any:
    """A label as a model may write it ("Off-Topic.", " LAPSE") as the schemas spell it."""
    if not isinstance(value, str):
        return value
    label = value.strip()
    label = label[:-1].rstrip() if label.endswith(".") else label
    return "_".join(label.lower().replace("-", " ").split())


class TurnVerdict(BaseModel):
    """The base of a verdict on one numbered item: its number, then the reason."""

    index: int | None = Field(default=None, description="The number of the item judged.")
    reason: str = Field(description="One sentence on why, in the conversation's language.")
    verdict: str


class TurnVerdictDetail(DetailsModel):
    """One judged item (a turn, an intent): its number, the verdict, the reason, and for
    an intent its text."""

    absent_when_none = frozenset({"taken_in_order", "text", "handling"})
    index: int
    verdict: str
    reason: str
    text: str | None = None  # an intent's words
    handling: str | None = None  # TopicAdherence: "answered" or "declined"
    taken_in_order: bool | None = None  # True: the judge's numbering was wrong


class HasVerdicts(Protocol):
    @property
    def verdicts(self) -> Sequence[TurnVerdict]: ...


VerdictT = TypeVar("VerdictT", bound=TurnVerdict)
RepliesT = TypeVar("RepliesT", bound=BaseModel)


def in_turn_order(
    verdicts: Sequence[VerdictT], numbers: Sequence[int]
) -> tuple[list[VerdictT], bool]:
    """The verdicts in the order of ``numbers``, and whether their own numbers were
    ignored to get there (taken in the order given)."""
    by_number = {verdict.index: verdict for verdict in verdicts}
    if len(by_number) == len(numbers) and set(by_number) == set(numbers):
        return [by_number[number] for number in numbers], False
    return list(verdicts), True


def count_check(numbers: Sequence[int], noun: str) -> Callable[[Any], str | None]:
    """One verdict per item; else what to change, precisely (sent back to the judge)."""
    listed = ", ".join(map(str, numbers))

    def check(reply: Any) -> str | None:
        given = [verdict.index for verdict in reply.verdicts]
        if len(given) == len(numbers):
            return None
        return (
            f"there are {len(numbers)} {noun}s to judge ({noun}s {listed}), but your reply "
            f"gave {len(given)} verdict{'' if len(given) == 1 else 's'} (indices "
            f"{given or 'none'}). Give exactly one verdict per {noun}, with its number as "
            f"index: {listed}."
        )

    return check


class TurnJudgement(BaseModel):
    verdicts: list[TurnVerdictDetail]
    usage: TokenUsage


async def ask_per_item(
    judge: Judge,
    step: str,
    schema: type[RepliesT],
    *,
    values: Mapping[str, Any],
    numbers: Sequence[int],
    noun: str,
    texts: Mapping[int, str] | None = None,
    prompt: StepPrompt | None = None,
    config: RunnableConfig | None = None,
) -> TurnJudgement:
    """Ask ``step`` for one verdict per item of ``numbers`` (turns or intents) in one
    request, and read them back in that order."""
    if not numbers:
        return TurnJudgement(verdicts=[], usage=TokenUsage())
    prompt = prompt or DEFAULT_STEP_PROMPTS[step]
    messages = prompt.messages(step, {**values, "count": len(numbers)})
    items = tuple(str(number) for number in numbers)

    async def work(child: RunnableConfig) -> TurnJudgement:
        with asking(StepIntent(step=step, items=items)):
            reply = await ask_structured(
                judge,
                schema=schema,
                messages=messages,
                check=count_check(numbers, noun),
                config=child,
            )
        given: Sequence[TurnVerdict] = reply.parsed.verdicts  # type: ignore[attr-defined]
        ordered, taken_in_order = in_turn_order(given, numbers)
        verdicts = [
            TurnVerdictDetail(
                index=number,
                verdict=verdict.verdict,
                reason=unescape_data(verdict.reason),
                text=(texts or {}).get(number),
                handling=getattr(verdict, "handling", None),
                taken_in_order=True if taken_in_order else None,
            )
            for number, verdict in zip(numbers, ordered)
        ]
        return TurnJudgement(verdicts=verdicts, usage=reply.usage)

    return await step_run(step, dict(values), work, config)
