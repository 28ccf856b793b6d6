"""The claim steps: text -> atomic claims; claims + source -> one verdict per claim.

- ``decompose_claims``: text -> atomic, self-contained claims in the text's language.
- ``verify_claims``: claims + sources -> exactly one verdict per claim, re-asked otherwise.
  Verdicts numbered wrong but one per claim are taken in claim order (``taken_in_order``).
- ``claims_checked``: both, for one text against its source (two requests).
- ``supported_ratio``: the share of verdicts that are "supported".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel

from langchain_answer_metrics.core.result import ClaimVerdictDetail, TokenUsage
from langchain_answer_metrics.judging.judges import Judge
from langchain_answer_metrics.judging.numbered import count_check, in_item_order, item_numbers
from langchain_answer_metrics.judging.prompt_set import DEFAULT_STEP_PROMPTS, StepPrompt
from langchain_answer_metrics.judging.prompts import unescape_data
from langchain_answer_metrics.judging.schemas import ClaimList, ClaimVerdicts
from langchain_answer_metrics.judging.steps.intent import StepIntent, asking
from langchain_answer_metrics.judging.structured import ask_structured
from langchain_answer_metrics.judging.tracing import step_run

ClaimSide = Literal["response", "reference"]


class Decomposition(BaseModel):
    claims: list[str]
    usage: TokenUsage


class Verification(BaseModel):
    verdicts: list[ClaimVerdictDetail]
    usage: TokenUsage
    # The judge numbered its verdicts wrong (one per claim still): taken in claim order.
    verdicts_taken_in_order: bool = False


async def decompose_claims(
    judge: Judge,
    text: str,
    *,
    question: str | None = None,
    side: ClaimSide | None = None,
    prompt: StepPrompt | None = None,
    config: RunnableConfig | None = None,
) -> Decomposition:
    """Break ``text`` into atomic claims; ``question`` only helps resolve references.

    ``side`` says whose text it is, for the trace; ``prompt`` replaces the default one.
    """
    prompt = prompt or DEFAULT_STEP_PROMPTS["decompose_claims"]
    messages = prompt.messages("decompose_claims", {"text": text, "question": question})

    async def work(child: RunnableConfig) -> Decomposition:
        with asking(StepIntent(step="decompose_claims", text=text)):
            reply = await ask_structured(judge, schema=ClaimList, messages=messages, config=child)
        # A judge may echo the prompt's escaping ("AT&amp;T"): read back once, as it was.
        claims = [unescape_data(claim).strip() for claim in reply.parsed.claims]
        claims = [claim for claim in claims if claim]
        return Decomposition(claims=claims, usage=reply.usage)

    return await step_run(
        "decompose_claims", {"text": text, "question": question}, work, config, side=side
    )


async def verify_claims(
    judge: Judge,
    claims: Sequence[str],
    sources: Sequence[str],
    *,
    question: str | None = None,
    side: ClaimSide | None = None,
    prompt: StepPrompt | None = None,
    config: RunnableConfig | None = None,
) -> Verification:
    """Give each claim one verdict (supported, contradicted, neutral) against ``sources``.

    A reply with more or fewer verdicts than claims is re-asked, never trimmed. One with a
    verdict per claim but numbered wrong (0-based, all 1, no index) is taken in order, and
    each verdict says so (``ClaimVerdictDetail.taken_in_order``; here
    ``verdicts_taken_in_order``). Reasons and evidence are read back from the prompt's
    escaping once, as claims are in :func:`decompose_claims`.

    ``question`` is given only when the source answers it (a reference, a response): a
    short source ("Paris") is then read as its answer. Retrieved contexts get none.
    """
    claims = list(claims)
    if not claims:
        return Verification(verdicts=[], usage=TokenUsage())
    prompt = prompt or DEFAULT_STEP_PROMPTS["verify_claims"]
    messages = prompt.messages(
        "verify_claims",
        {"claims": claims, "source": list(sources), "count": len(claims), "question": question},
    )

    numbers = item_numbers(len(claims))

    async def work(child: RunnableConfig) -> Verification:
        intent = StepIntent(step="verify_claims", claims=tuple(claims), sources=tuple(sources))
        with asking(intent):
            reply = await ask_structured(
                judge,
                schema=ClaimVerdicts,
                messages=messages,
                check=count_check(numbers, "claim"),
                config=child,
            )
        in_order, taken_in_order = in_item_order(reply.parsed.verdicts, numbers)
        verdicts = [
            ClaimVerdictDetail(
                claim=claim,
                verdict=verdict.verdict,
                reason=unescape_data(verdict.reason),
                evidence=unescape_data(verdict.evidence),
                taken_in_order=True if taken_in_order else None,
            )
            for claim, verdict in zip(claims, in_order)
        ]
        return Verification(
            verdicts=verdicts, usage=reply.usage, verdicts_taken_in_order=taken_in_order
        )

    return await step_run(
        "verify_claims", {"claims": claims, "sources": list(sources)}, work, config, side=side
    )


async def claims_checked(
    judge: Judge,
    text: str,
    source: str | list[str],
    *,
    question: str | None,
    side: ClaimSide,
    config: RunnableConfig,
    prompts: Mapping[str, StepPrompt] | None = None,
    source_answers_question: bool = False,
) -> tuple[list[ClaimVerdictDetail], TokenUsage]:
    """Decompose ``text`` (the ``side`` it is from) and verify its claims against
    ``source``: two requests, with ``prompts`` by step where given.

    ``source_answers_question``: the source is itself an answer to ``question`` (a
    reference or a response, not retrieved contexts), so verification sees the question
    too and reads a short source ("Paris") as its answer.
    """
    prompts = prompts or {}
    decomposition = await decompose_claims(
        judge,
        text,
        question=question,
        side=side,
        prompt=prompts.get("decompose_claims"),
        config=config,
    )
    sources = [source] if isinstance(source, str) else source
    verification = await verify_claims(
        judge,
        decomposition.claims,
        sources,
        side=side,
        question=question if source_answers_question else None,
        prompt=prompts.get("verify_claims"),
        config=config,
    )
    return verification.verdicts, decomposition.usage.add(verification.usage)


def supported_ratio(verdicts: list[ClaimVerdictDetail]) -> float:
    """Share of claims judged supported; 0.0 when there are no claims (never NaN)."""
    if not verdicts:
        return 0.0
    return sum(verdict.verdict == "supported" for verdict in verdicts) / len(verdicts)
