"""The aspect step: criterion + response -> PASS or FAIL with a reason, k times.

AspectCritic's step, with its own prompt and schema (``AspectVerdict``); its votes are
asked the way every voting step asks them (:func:`~.voting.ask_votes`).
"""

from __future__ import annotations

from typing import Literal

from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel

from langchain_answer_metrics.core.result import TokenUsage
from langchain_answer_metrics.judging.judges import Judge
from langchain_answer_metrics.judging.prompt_set import DEFAULT_STEP_PROMPTS, StepPrompt
from langchain_answer_metrics.judging.schemas import AspectVerdict
from langchain_answer_metrics.judging.steps.intent import StepIntent
from langchain_answer_metrics.judging.steps.voting import ask_votes


class AspectJudgement(BaseModel):
    verdict: Literal["PASS", "FAIL"]
    reason: str
    usage: TokenUsage


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
    values = {"criterion": criterion, "response": response, "question": question}
    replies = await ask_votes(
        judge,
        step="judge_aspect",
        schema=AspectVerdict,
        prompt=prompt or DEFAULT_STEP_PROMPTS["judge_aspect"],
        values=values,
        votes=votes,
        intent=StepIntent(step="judge_aspect", criterion=criterion, response=response),
        trace_input=values,
        config=config,
    )
    return [
        AspectJudgement(verdict=vote.parsed.verdict, reason=vote.parsed.reason, usage=vote.usage)
        for vote in replies
    ]
