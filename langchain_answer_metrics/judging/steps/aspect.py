"""The aspect step: criterion + response -> PASS or FAIL with a reason, k times."""

from __future__ import annotations

from typing import Literal

from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel

from langchain_answer_metrics.judging.judges import Judge
from langchain_answer_metrics.judging.prompt_set import DEFAULT_STEP_PROMPTS, StepPrompt
from langchain_answer_metrics.judging.prompts import unescape_data
from langchain_answer_metrics.judging.schemas import AspectVerdict
from langchain_answer_metrics.judging.steps.intent import StepIntent, asking
from langchain_answer_metrics.judging.structured import ask_structured, ask_structured_choices
from langchain_answer_metrics.judging.sync import gather_settled
from langchain_answer_metrics.judging.tracing import step_run
from langchain_answer_metrics.result import TokenUsage


class AspectJudgement(BaseModel):
    verdict: Literal["PASS", "FAIL"]
    reason: str
    usage: TokenUsage


def _aspect_messages(
    prompt: StepPrompt,
    criterion: str,
    response: str,
    question: str | None,
    vote: tuple[int, int] | None,
) -> list[BaseMessage]:
    messages = prompt.messages(
        "judge_aspect", {"criterion": criterion, "response": response, "question": question}
    )
    if vote is not None:
        marker = f"(Independent vote {vote[0]} of {vote[1]}.)"
        last = messages[-1]
        if isinstance(last.content, str):
            messages[-1] = last.model_copy(update={"content": f"{last.content}\n\n{marker}"})
        else:
            messages.append(HumanMessage(marker))
    return messages


async def judge_aspect(
    judge: Judge,
    *,
    criterion: str,
    response: str,
    question: str | None = None,
    votes: int = 1,
    prompt: StepPrompt | None = None,
    config: RunnableConfig | None = None,
) -> list[AspectJudgement]:
    """PASS or FAIL ``response`` against ``criterion``, ``votes`` independent times.

    Several votes go in one request where the model samples ``n`` choices (OpenAI's
    ``n``, with tool calling); otherwise as parallel requests, each marked "vote i of k"
    so each is its own call and cache entry rather than one reply shared k times.
    """
    trace_input = {"criterion": criterion, "response": response, "question": question}
    prompt = prompt or DEFAULT_STEP_PROMPTS["judge_aspect"]
    intent = StepIntent(step="judge_aspect", criterion=criterion, response=response)

    async def one_request(child: RunnableConfig) -> list[AspectJudgement]:
        messages = _aspect_messages(prompt, criterion, response, question, None)
        with asking(intent):
            reply = await ask_structured_choices(
                judge, schema=AspectVerdict, messages=messages, n=votes, config=child
            )
        shares = [reply.usage] + [TokenUsage()] * (votes - 1)
        return [
            AspectJudgement(
                verdict=choice.verdict, reason=unescape_data(choice.reason), usage=spent
            )
            for choice, spent in zip(reply.parsed, shares)
        ]

    async def separate_requests(child: RunnableConfig) -> list[AspectJudgement]:
        async def vote(position: int) -> AspectJudgement:
            marker = (position, votes) if votes > 1 else None
            with asking(intent):
                reply = await ask_structured(
                    judge,
                    schema=AspectVerdict,
                    messages=_aspect_messages(prompt, criterion, response, question, marker),
                    config=child,
                )
            return AspectJudgement(
                verdict=reply.parsed.verdict,
                reason=unescape_data(reply.parsed.reason),  # as it was before escaping
                usage=reply.usage,
            )

        return await gather_settled(*(vote(i) for i in range(1, votes + 1)))

    batched = votes > 1 and judge.can_sample_n and judge.structured_method == "function_calling"
    work = one_request if batched else separate_requests
    return await step_run("judge_aspect", trace_input, work, config)
