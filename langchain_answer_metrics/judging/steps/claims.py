"""The claim steps: text -> atomic claims; claims + source -> one verdict per claim.

- ``decompose_claims``: text -> atomic, self-contained claims in the text's language.
- ``verify_claims``: claims + sources -> exactly one verdict per claim, re-asked otherwise.
- ``claims_checked``: both, for one text against its source (two requests).
- ``supported_ratio``: the share of verdicts that are "supported".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Literal

from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel

from langchain_answer_metrics.judging.judges import Judge
from langchain_answer_metrics.judging.prompt_set import DEFAULT_STEP_PROMPTS, StepPrompt
from langchain_answer_metrics.judging.schemas import ClaimList, ClaimVerdicts
from langchain_answer_metrics.judging.structured import ask_structured
from langchain_answer_metrics.judging.tracing import step_run
from langchain_answer_metrics.result import ClaimVerdictDetail, TokenUsage

ClaimSide = Literal["response", "reference"]


class Decomposition(BaseModel):
    claims: list[str]
    usage: TokenUsage


class Verification(BaseModel):
    verdicts: list[ClaimVerdictDetail]
    usage: TokenUsage


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
        reply = await ask_structured(judge, schema=ClaimList, messages=messages, config=child)
        claims = [claim.strip() for claim in reply.parsed.claims if claim.strip()]
        return Decomposition(claims=claims, usage=reply.usage)

    return await step_run(
        "decompose_claims", {"text": text, "question": question}, work, config, side=side
    )


def _check_alignment(claim_count: int) -> Callable[[ClaimVerdicts], str | None]:
    def check(reply: ClaimVerdicts) -> str | None:
        indices = [verdict.index for verdict in reply.verdicts]
        if sorted(indices) == list(range(1, claim_count + 1)):
            return None
        return (
            f"there are {claim_count} claims numbered 1 to {claim_count}, but you gave "
            f"verdicts for {indices or 'none'}. Give exactly one verdict per claim."
        )

    return check


async def verify_claims(
    judge: Judge,
    claims: Sequence[str],
    sources: Sequence[str],
    *,
    side: ClaimSide | None = None,
    prompt: StepPrompt | None = None,
    config: RunnableConfig | None = None,
) -> Verification:
    """Give each claim one verdict (supported, contradicted, neutral) against ``sources``.

    A reply that does not line up one verdict per claim is re-asked, never trimmed.
    """
    claims = list(claims)
    if not claims:
        return Verification(verdicts=[], usage=TokenUsage())
    prompt = prompt or DEFAULT_STEP_PROMPTS["verify_claims"]
    messages = prompt.messages(
        "verify_claims", {"claims": claims, "source": list(sources), "count": len(claims)}
    )

    async def work(child: RunnableConfig) -> Verification:
        reply = await ask_structured(
            judge,
            schema=ClaimVerdicts,
            messages=messages,
            check=_check_alignment(len(claims)),
            config=child,
        )
        by_index = {verdict.index: verdict for verdict in reply.parsed.verdicts}
        verdicts = [
            ClaimVerdictDetail(
                claim=claim,
                verdict=by_index[position].verdict,
                reason=by_index[position].reason,
                evidence=by_index[position].evidence,
            )
            for position, claim in enumerate(claims, 1)
        ]
        return Verification(verdicts=verdicts, usage=reply.usage)

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
) -> tuple[list[ClaimVerdictDetail], TokenUsage]:
    """Decompose ``text`` (the ``side`` it is from) and verify its claims against
    ``source``: two requests, with ``prompts`` by step where given."""
    prompts = prompts or {}
    decomposition = await decompose_claims(
        judge, text, question=question, side=side,
        prompt=prompts.get("decompose_claims"), config=config,
    )
    sources = [source] if isinstance(source, str) else source
    verification = await verify_claims(
        judge, decomposition.claims, sources, side=side,
        prompt=prompts.get("verify_claims"), config=config,
    )
    return verification.verdicts, decomposition.usage.add(verification.usage)


def supported_ratio(verdicts: list[ClaimVerdictDetail]) -> float:
    """Share of claims judged supported; 0.0 when there are no claims (never NaN)."""
    if not verdicts:
        return 0.0
    return sum(verdict.verdict == "supported" for verdict in verdicts) / len(verdicts)
