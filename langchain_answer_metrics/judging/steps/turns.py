"""Verdicts per turn (or per intent) of a conversation, asked in ONE request per thread.

A conversation step shows the judge the thread (:mod:`~..conversation_text`) and asks for
one verdict for each item it names, with the item's number as ``index`` (a turn's own
number, so a reason and a verdict name the turn at fault). A reply with more or fewer
verdicts than items is re-asked, never trimmed; one with a verdict per item but numbered
wrong (0-based, all 1, none) is taken in order and says so, as the claim and context
steps do (:mod:`~langchain_answer_metrics.judging.numbered`).

    >>> await ask_per_item(judge, "judge_turn_relevance", TurnVerdicts, values=values,
    ...                    numbers=[2, 3], noun="turn")
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, Field, field_validator

from langchain_answer_metrics.core.result import DetailsModel, TokenUsage
from langchain_answer_metrics.judging.judges import Judge
from langchain_answer_metrics.judging.numbered import count_check, in_item_order
from langchain_answer_metrics.judging.prompt_set import DEFAULT_STEP_PROMPTS, StepPrompt
from langchain_answer_metrics.judging.prompts import unescape_data
from langchain_answer_metrics.judging.steps.intent import StepIntent, asking
from langchain_answer_metrics.judging.steps.voting import ask_votes
from langchain_answer_metrics.judging.structured import ask_structured
from langchain_answer_metrics.judging.tracing import step_run


def snake_label(value: Any) -> Any:
    """A label as a model may write it ("Off-Topic.", " LAPSE") as the schemas spell it."""
    if not isinstance(value, str):
        return value
    label = value.strip()
    label = label[:-1].rstrip() if label.endswith(".") else label
    return "_".join(label.lower().replace("-", " ").split())


class TurnVerdict(BaseModel):
    """The base of a verdict on one numbered item: its number, then the reason, then the
    label (a subclass narrows it to its labels, read as :func:`snake_label` reads them)."""

    index: int | None = Field(default=None, description="The number of the item judged.")
    reason: str = Field(description="One sentence on why, in the conversation's language.")
    verdict: str

    @field_validator("verdict", mode="before")
    @classmethod
    def _label(cls, value: Any) -> Any:
        return snake_label(value)


class TurnVerdictDetail(DetailsModel):
    """One judged item (a turn, an intent): its number, the verdict, the reason, and for
    an intent its text."""

    absent_when_none = frozenset({"taken_in_order", "text", "handling", "votes", "tie"})
    index: int
    verdict: str
    reason: str
    text: str | None = None  # an intent's words
    handling: str | None = None  # TopicAdherence: "answered" or "declined"
    taken_in_order: bool | None = None  # True: the judge's numbering was wrong
    votes: list[str] | None = None  # with strictness > 1: each vote's label(s), in order
    tie: bool | None = None  # True: the votes tied; the tie went as the step says


VerdictT = TypeVar("VerdictT", bound=TurnVerdict)
RepliesT = TypeVar("RepliesT", bound=BaseModel)


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
    votes: int = 1,
    tie_breaks: Mapping[str, Sequence[str]] | None = None,
    prompt: StepPrompt | None = None,
    config: RunnableConfig | None = None,
) -> TurnJudgement:
    """Ask ``step`` for one verdict per item of ``numbers`` (turns or intents) in one
    request, and read them back in that order.

    With ``votes`` > 1 each vote is one reply (``n`` choices in one request where the
    model samples them, else marked requests: :func:`~.voting.ask_votes`); each item's
    label is the majority of its votes, per labelled field (``verdict``, ``handling``). A
    tie goes to the first label ``tie_breaks[field]`` lists among the tied ones (the one
    that counts against the assistant), else to the first vote's; it is flagged ``tie``.
    A vote with more or fewer verdicts than items is asked again on its own, with the
    count check, never trimmed.
    """
    if not numbers:
        return TurnJudgement(verdicts=[], usage=TokenUsage())
    prompt = prompt or DEFAULT_STEP_PROMPTS[step]
    filled = {**values, "count": len(numbers)}
    items = tuple(str(number) for number in numbers)
    intent = StepIntent(step=step, items=items)
    check = count_check(numbers, noun)

    async def one_reply(child: RunnableConfig) -> tuple[Any, TokenUsage]:
        with asking(intent):
            reply = await ask_structured(
                judge,
                schema=schema,
                messages=prompt.messages(step, filled),
                check=check,
                config=child,
            )
        return reply.parsed, reply.usage

    if votes == 1:
        parsed, usage = await step_run(step, dict(values), one_reply, config)
        return TurnJudgement(verdicts=_details(numbers, [parsed], texts, {}), usage=usage)
    replies = await ask_votes(
        judge,
        step=step,
        schema=schema,
        prompt=prompt,
        values=filled,
        votes=votes,
        intent=intent,
        trace_input=dict(values),
        config=config,
    )
    usage = TokenUsage()
    ballots = []
    for reply in replies:
        usage = usage.add(reply.usage)
        if check(reply.parsed) is None:
            ballots.append(reply.parsed)
            continue
        again, spent = await step_run(step, dict(values), one_reply, config)
        usage = usage.add(spent)
        ballots.append(again)
    verdicts = _details(numbers, ballots, texts, tie_breaks or {})
    return TurnJudgement(verdicts=verdicts, usage=usage)


def _details(
    numbers: Sequence[int],
    ballots: Sequence[Any],
    texts: Mapping[int, str] | None,
    tie_breaks: Mapping[str, Sequence[str]],
) -> list[TurnVerdictDetail]:
    """Each item's verdict from one reply, or the majority of several (see ask_per_item)."""
    columns = []
    taken_in_order = False
    for ballot in ballots:
        ordered, in_order = in_item_order(ballot.verdicts, numbers)
        columns.append(ordered)
        taken_in_order = taken_in_order or in_order
    details = []
    for position, number in enumerate(numbers):
        cast = [column[position] for column in columns]
        fields = ["verdict"] + (["handling"] if hasattr(cast[0], "handling") else [])
        chosen: dict[str, str] = {}
        tied = False
        for field in fields:
            labels = [str(getattr(vote, field)) for vote in cast]
            chosen[field], was_tied = _majority(labels, tie_breaks.get(field, ()))
            tied = tied or was_tied
        agreeing = next(vote for vote in cast if vote.verdict == chosen["verdict"])
        details.append(
            TurnVerdictDetail(
                index=number,
                verdict=chosen["verdict"],
                reason=unescape_data(agreeing.reason),
                text=(texts or {}).get(number),
                handling=chosen.get("handling"),
                taken_in_order=True if taken_in_order else None,
                votes=None
                if len(cast) == 1
                else ["/".join(str(getattr(vote, field)) for field in fields) for vote in cast],
                tie=True if tied else None,
            )
        )
    return details


def _majority(labels: Sequence[str], tie_break: Sequence[str]) -> tuple[str, bool]:
    """The most common label, and whether it tied with another."""
    counts = Counter(labels)
    top = max(counts.values())
    leaders = [label for label in dict.fromkeys(labels) if counts[label] == top]
    if len(leaders) == 1:
        return leaders[0], False
    preferred = [label for label in tie_break if label in leaders]
    return (preferred[0] if preferred else leaders[0]), True
