"""Asking a judge for several independent votes on one step: the one mechanism every
voting step uses (AspectCritic's, a CustomJudge's, ResponseRelevance's).

Several votes go in one request where the model samples ``n`` choices (OpenAI's ``n``,
with tool calling); otherwise as parallel requests, each marked "vote i of k" so each is
its own call and cache entry rather than one reply shared k times. Each vote's ``reason``
is read back as it was before escaping.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Generic, TypeVar

from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel

from langchain_answer_metrics.core.result import TokenUsage
from langchain_answer_metrics.judging.judges import Judge
from langchain_answer_metrics.judging.prompt_set import StepPrompt
from langchain_answer_metrics.judging.prompts import unescape_data
from langchain_answer_metrics.judging.steps.intent import StepIntent, asking
from langchain_answer_metrics.judging.structured import ask_structured, ask_structured_choices
from langchain_answer_metrics.judging.sync import gather_settled
from langchain_answer_metrics.judging.tracing import step_run

SchemaT = TypeVar("SchemaT", bound=BaseModel)


class Vote(BaseModel, Generic[SchemaT]):
    """One independent reply: the parsed verdict (its reason unescaped) and its usage."""

    parsed: SchemaT
    usage: TokenUsage


def _with_marker(messages: list[BaseMessage], vote: tuple[int, int] | None) -> list[BaseMessage]:
    if vote is None:
        return messages
    marker = f"(Independent vote {vote[0]} of {vote[1]}.)"
    last = messages[-1]
    if isinstance(last.content, str):
        return [*messages[:-1], last.model_copy(update={"content": f"{last.content}\n\n{marker}"})]
    return [*messages, HumanMessage(marker)]


def _unescaped(parsed: SchemaT) -> SchemaT:
    """The reply with its reason as it was before escaping (the judge may echo entities)."""
    reason = getattr(parsed, "reason", None)
    if not isinstance(reason, str):
        return parsed
    return parsed.model_copy(update={"reason": unescape_data(reason)})


async def ask_votes(
    judge: Judge,
    *,
    step: str,
    schema: type[SchemaT],
    prompt: StepPrompt,
    values: Mapping[str, Any],
    votes: int,
    intent: StepIntent,
    trace_input: dict[str, Any],
    config: RunnableConfig | None = None,
) -> list[Vote[SchemaT]]:
    """``votes`` independent ``schema`` replies to ``step``'s prompt filled with ``values``.

    Several votes go in one request where the model samples ``n`` choices (OpenAI's
    ``n``, with tool calling); otherwise as parallel requests, each marked "vote i of k"
    so each is its own call and cache entry rather than one reply shared k times.
    """
    base = prompt.messages(step, values)

    async def one_request(child: RunnableConfig) -> list[Vote[SchemaT]]:
        with asking(intent):
            reply = await ask_structured_choices(
                judge, schema=schema, messages=base, n=votes, config=child
            )
        shares = [reply.usage] + [TokenUsage()] * (votes - 1)
        return [
            Vote(parsed=_unescaped(parsed), usage=spent)
            for parsed, spent in zip(reply.parsed, shares)
        ]

    async def separate_requests(child: RunnableConfig) -> list[Vote[SchemaT]]:
        async def vote(position: int) -> Vote[SchemaT]:
            marker = (position, votes) if votes > 1 else None
            with asking(intent):
                reply = await ask_structured(
                    judge, schema=schema, messages=_with_marker(base, marker), config=child
                )
            return Vote(parsed=_unescaped(reply.parsed), usage=reply.usage)

        return await gather_settled(*(vote(i) for i in range(1, votes + 1)))

    batched = votes > 1 and judge.can_sample_n and judge.structured_method == "function_calling"
    return await step_run(step, trace_input, one_request if batched else separate_requests, config)


__all__ = ["Vote", "ask_votes"]
