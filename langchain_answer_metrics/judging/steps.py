"""The judge steps every metric is built from, each a named child run in a trace.

- ``decompose_claims``: text -> atomic, self-contained claims in the text's language.
- ``verify_claims``: claims + source -> exactly one verdict per claim.
- ``judge_aspect``: criterion + response -> PASS or FAIL with a reason.
- ``embed``: texts -> one vector each (long texts chunked on sentence boundaries).

A step knows nothing of the metrics that use it.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal, TypeVar

import numpy as np
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, ConfigDict, Field

from langchain_answer_metrics.judging import prompts
from langchain_answer_metrics.judging.batching import EmbeddingBatcher
from langchain_answer_metrics.judging.chunking import LongTextMode, fit_to_limit
from langchain_answer_metrics.judging.embedding_cache import embed_with_cache
from langchain_answer_metrics.judging.errors import StepError
from langchain_answer_metrics.judging.judges import Embedder, Judge
from langchain_answer_metrics.judging.schemas import AspectVerdict, ClaimList, ClaimVerdicts
from langchain_answer_metrics.judging.scope import current_scope
from langchain_answer_metrics.judging.structured import ask_structured, ask_structured_choices
from langchain_answer_metrics.judging.sync import gather_settled
from langchain_answer_metrics.judging.tracing import child_run
from langchain_answer_metrics.result import ClaimVerdictDetail, TokenUsage

OutT = TypeVar("OutT")


class Decomposition(BaseModel):
    claims: list[str]
    usage: TokenUsage


class Verification(BaseModel):
    verdicts: list[ClaimVerdictDetail]
    usage: TokenUsage


class AspectJudgement(BaseModel):
    verdict: Literal["PASS", "FAIL"]
    reason: str
    usage: TokenUsage


class Embedding(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    vectors: list[Any] = Field(description="One numpy vector per input text.")
    requests: int
    cached: int = Field(default=0, description="Texts served from LangChain's cache.")


ClaimSide = Literal["response", "reference"]


async def _traced(
    step: str,
    trace_input: dict[str, Any],
    work: Callable[[RunnableConfig], Awaitable[OutT]],
    config: RunnableConfig | None,
    *,
    side: ClaimSide | None = None,
) -> OutT:
    """Run ``work`` as a child run named ``step``; wrap its failure in :class:`StepError`.

    ``side`` tags the run (``side:response``) and its metadata, so FactualCorrectness's
    two directions can be told apart in a trace.
    """
    tags = [f"side:{side}"] if side else []
    metadata = {"side": side} if side else None
    try:
        return await child_run(step, trace_input, work, config, tags=tags, metadata=metadata)
    except Exception as error:
        raise StepError(step, error) from error


def _messages(system: str, user: str) -> list[BaseMessage]:
    return [SystemMessage(system), HumanMessage(user)]


async def decompose_claims(
    judge: Judge,
    text: str,
    *,
    question: str | None = None,
    side: ClaimSide | None = None,
    config: RunnableConfig | None = None,
) -> Decomposition:
    """Break ``text`` into atomic claims; ``question`` only helps resolve references.

    ``side`` says whose text it is, for the trace.
    """
    messages = _messages(
        prompts.DECOMPOSE_SYSTEM,
        prompts.DECOMPOSE_USER.format(
            question_section=prompts.optional_question(question),
            text_section=prompts.tag("text", text),
        ),
    )

    async def work(child: RunnableConfig) -> Decomposition:
        reply = await ask_structured(judge, schema=ClaimList, messages=messages, config=child)
        claims = [claim.strip() for claim in reply.parsed.claims if claim.strip()]
        return Decomposition(claims=claims, usage=reply.usage)

    return await _traced(
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


def _source_section(sources: Sequence[str]) -> str:
    if len(sources) == 1:
        return prompts.tag("source", sources[0])
    contexts = "\n".join(
        f'<context index="{position}">\n{prompts.escape_for_tag(source)}\n</context>'
        for position, source in enumerate(sources, 1)
    )
    return f"<source>\n{contexts}\n</source>"


async def verify_claims(
    judge: Judge,
    claims: Sequence[str],
    sources: Sequence[str],
    *,
    side: ClaimSide | None = None,
    config: RunnableConfig | None = None,
) -> Verification:
    """Give each claim one verdict (supported, contradicted, neutral) against ``sources``.

    A reply that does not line up one verdict per claim is re-asked, never trimmed.
    """
    claims = list(claims)
    if not claims:
        return Verification(verdicts=[], usage=TokenUsage())
    messages = _messages(
        prompts.VERIFY_SYSTEM,
        prompts.VERIFY_USER.format(
            count=len(claims),
            source_section=_source_section(sources),
            claims_section=prompts.tag("claims", prompts.number_claims(claims)),
        ),
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

    return await _traced(
        "verify_claims", {"claims": claims, "sources": list(sources)}, work, config, side=side
    )


def _aspect_messages(
    criterion: str, response: str, question: str | None, vote: tuple[int, int] | None
) -> list[BaseMessage]:
    user = prompts.ASPECT_USER.format(
        criterion_section=prompts.tag("criterion", criterion),
        question_section=prompts.optional_question(question),
        response_section=prompts.tag("response", response),
    )
    if vote is not None:
        user += f"\n\n(Independent vote {vote[0]} of {vote[1]}.)"
    return _messages(prompts.ASPECT_SYSTEM, user)


async def judge_aspect(
    judge: Judge,
    *,
    criterion: str,
    response: str,
    question: str | None = None,
    votes: int = 1,
    config: RunnableConfig | None = None,
) -> list[AspectJudgement]:
    """PASS or FAIL ``response`` against ``criterion``, ``votes`` independent times.

    Several votes go in one request where the model samples ``n`` choices (OpenAI's
    ``n``, with tool calling); otherwise as parallel requests, each marked "vote i of k"
    so each is its own call and cache entry rather than one reply shared k times.
    """
    trace_input = {"criterion": criterion, "response": response, "question": question}

    async def one_request(child: RunnableConfig) -> list[AspectJudgement]:
        messages = _aspect_messages(criterion, response, question, None)
        reply = await ask_structured_choices(
            judge, schema=AspectVerdict, messages=messages, n=votes, config=child
        )
        shares = [reply.usage] + [TokenUsage()] * (votes - 1)
        return [
            AspectJudgement(verdict=choice.verdict, reason=choice.reason, usage=spent)
            for choice, spent in zip(reply.parsed, shares)
        ]

    async def separate_requests(child: RunnableConfig) -> list[AspectJudgement]:
        async def vote(position: int) -> AspectJudgement:
            marker = (position, votes) if votes > 1 else None
            reply = await ask_structured(
                judge,
                schema=AspectVerdict,
                messages=_aspect_messages(criterion, response, question, marker),
                config=child,
            )
            return AspectJudgement(
                verdict=reply.parsed.verdict, reason=reply.parsed.reason, usage=reply.usage
            )

        return await gather_settled(*(vote(i) for i in range(1, votes + 1)))

    batched = votes > 1 and judge.can_sample_n and judge.structured_method == "function_calling"
    work = one_request if batched else separate_requests
    return await _traced("judge_aspect", trace_input, work, config)


async def _embed_once(embedder: Embedder, texts: list[str]) -> tuple[list[list[float]], int]:
    """Vectors for ``texts`` (at most one request), and how many came from the cache."""
    return await embed_with_cache(
        embedder.model, texts, functools.partial(_embed_request, embedder)
    )


async def _embed_batch(embedder: Embedder, texts: list[str]) -> list[list[float]]:
    vectors, _ = await _embed_once(embedder, texts)
    return vectors


async def _embed_request(embedder: Embedder, texts: list[str]) -> list[list[float]]:
    vectors = await embedder.request().ainvoke(texts)
    # The one place replies come back from the model, so the one place they are checked.
    if len(vectors) != len(texts):
        raise ValueError(f"{embedder.label} returned {len(vectors)} vectors for {len(texts)} texts")
    return vectors


def _batcher(embedder: Embedder) -> EmbeddingBatcher | None:
    scope = current_scope()
    if scope is None:
        return None
    # Keyed by the model and how it is called, not by the Embedder wrapper: each metric
    # wraps a plain Embeddings model in its own Embedder, and SemanticSimilarity and
    # AnswerCorrectness on the same model must share one batcher (and its de-duplication).
    key = (
        id(embedder.model), embedder.batch_size, id(embedder.retry), id(embedder.rate_limiter)
    )
    batcher: EmbeddingBatcher | None = scope.batchers.get(key)
    if batcher is None:
        batcher = EmbeddingBatcher(
            functools.partial(_embed_batch, embedder), batch_size=embedder.batch_size
        )
        scope.batchers[key] = batcher
    return batcher


async def embed(
    embedder: Embedder,
    texts: Sequence[str],
    *,
    max_tokens: int = 512,
    long_text: LongTextMode = "chunk",
    config: RunnableConfig | None = None,
) -> Embedding:
    """One vector per text; long texts are chunked and their chunk vectors averaged.

    Within a run scope, requests are shared with concurrent samples (``requests`` is then
    0 here: the run counts them); otherwise the texts not in LangChain's cache go out in
    ``batch_size`` requests, and ``cached`` counts the texts that were.
    """
    pieces = [fit_to_limit(text, max_tokens=max_tokens, mode=long_text) for text in texts]

    async def work(_: RunnableConfig) -> Embedding:
        unique = list(dict.fromkeys(chunk for chunks in pieces for chunk in chunks))
        batcher = _batcher(embedder)
        requests = cached = 0
        raw: Sequence[Any]  # per text: a vector (list of floats or array)
        if batcher is not None:
            raw = await batcher.embed(unique)
        else:
            fetched: list[list[float]] = []
            for start in range(0, len(unique), embedder.batch_size):
                batch = unique[start : start + embedder.batch_size]
                vectors, hits = await _embed_once(embedder, batch)
                fetched.extend(vectors)
                cached += hits
                requests += hits < len(batch)
            raw = fetched
        vectors_by_text = {
            text: np.asarray(vector, dtype=np.float64) for text, vector in zip(unique, raw)
        }
        vectors = [
            np.mean([vectors_by_text[chunk] for chunk in chunks], axis=0) for chunks in pieces
        ]
        return Embedding(vectors=vectors, requests=requests, cached=cached)

    return await _traced("embed", {"texts": list(texts)}, work, config)
