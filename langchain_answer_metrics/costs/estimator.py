"""What a run will cost, before it runs: :func:`estimate` sends no request.

    >>> plan = estimate(samples, [FactualCorrectness(llm=judge), Faithfulness(llm=judge)])
    >>> plan.models["gpt-4o-mini"].requests, plan.total.cost_high

It is a dry run of the package's own logic: the metrics are copied with their models
replaced by offline stand-ins (:mod:`.dry_run`) that keep the real labels, methods and
sampling of ``n`` choices, and run through :func:`~langchain_answer_metrics.runner.aevaluate`.
So what the runner shares (one decomposition for several metrics, repeated references,
batched embeddings, ``n``-sampled votes) is counted exactly as a real run does it, and
every prompt is the one the real model would get. Prompts already in LangChain's cache
for the real model, and vectors already cached for the real embedding model, cost nothing.

What is exact: the requests, given the judges answer well (a re-ask after a malformed
reply is not foreseen; the decomposition's claim count is the text's clauses, which
shapes the verification prompts). What is estimated: tokens (see :mod:`.tokens`) and so
the cost, as a low/high range. ``cost_high`` takes every input token at the input price
and the longest completions. ``cost_low`` takes the shortest completions and counts the
provider's automatic prompt caching as OpenAI documents it: a request whose static prefix
(the schema, the system prompt and the examples, everything before the judged data) was
sent before and is at least 1,024 tokens has that prefix read from the cache, in 128-token
steps, at ``Price.cached_input_per_million`` (``cached_input_tokens``). Caches expire
after minutes of disuse, so the real discount lies between the two; a run's own spend
counts it from what the provider reports.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from langsmith.run_helpers import tracing_context
from pydantic import BaseModel, Field

from langchain_answer_metrics.costs.dry_run import (
    ChatRequest,
    Recorder,
    dry_run_cache,
    dry_run_metrics,
)
from langchain_answer_metrics.costs.tokens import (
    MESSAGE_OVERHEAD,
    TokenCounter,
    as_token_counter,
    completion_range,
    message_text,
    request_schema,
)
from langchain_answer_metrics.judging.sync import run_sync
from langchain_answer_metrics.metrics.base import AnswerMetric
from langchain_answer_metrics.prices import Price, PriceTable, price_for
from langchain_answer_metrics.run import Run, RunOptions
from langchain_answer_metrics.run_results import MetricError
from langchain_answer_metrics.sample import SampleLike
from langchain_answer_metrics.spend import flex_labels
from langchain_answer_metrics.strict_options import rejects_unknown_keywords

__all__ = [
    "CostEstimate", "EstimateTotal", "ModelEstimate", "aestimate", "combine", "estimate",
]  # fmt: skip


class EstimateTotal(BaseModel):
    """The whole run: sums over the models."""

    requests: int = 0
    cached: int = Field(default=0, description="Requests (chat) or texts (embeddings) "
                        "served from LangChain's cache: free.")
    prompt_tokens: int = 0
    cached_input_tokens: int = Field(
        default=0, description="Of prompt_tokens, those a provider's prompt cache is "
        "expected to serve (a repeated static prefix of 1,024+ tokens); in cost_low only.",
    )
    completion_tokens_low: int = 0
    completion_tokens_high: int = 0
    cost_low: float | None = Field(default=None, description="USD; None unless every model "
                                   "that makes requests has a price.")
    cost_high: float | None = None


class ModelEstimate(EstimateTotal):
    """One model of the run, by its label."""

    label: str
    model_id: str
    kind: Literal["chat", "embedding"]
    price: Price | None = None


class CostEstimate(BaseModel):
    """Expected requests, tokens and cost per model label, and their total (:func:`estimate`).

    Attributes:
        models: per model label, its requests, tokens, and cost as a low/high range.
        total: the sums over the models (costs ``None`` unless every model has a price).
        samples: the samples estimated.
        dry_run_errors: metric outcomes that failed in the dry run (bad samples are refused
            before any request, so they cost nothing in a real run either).

    Example:
        >>> plan = estimate(samples, metrics)
        >>> plan.models["gpt-4o-mini"].requests, plan.total.cost_low, plan.total.cost_high
        >>> plan.as_dict()  # what ``answer-metrics evaluate --estimate --json`` writes
    """

    models: dict[str, ModelEstimate]
    total: EstimateTotal
    samples: int
    dry_run_errors: int = Field(
        default=0, description="Metric outcomes that failed in the dry run (bad samples "
        "are refused before any request, so they cost nothing in a real run either).",
    )
    dry_run_failures: dict[str, int] = Field(default_factory=dict)
    """Why they failed: the first distinct ``"<metric>: <error>"``, each with its count."""

    def as_dict(self) -> dict[str, Any]:
        """Per model label ``requests``, ``prompt_tokens``, ``completion_tokens_low/high``,
        ``cost_low/high`` (None without a price), and ``total``: JSON-ready."""
        keys = (
            "requests", "cached", "prompt_tokens", "cached_input_tokens",
            "completion_tokens_low", "completion_tokens_high", "cost_low", "cost_high",
        )
        out: dict[str, Any] = {
            label: {key: getattr(model, key) for key in keys}
            for label, model in self.models.items()
        }
        out["total"] = {key: getattr(self.total, key) for key in keys}
        return out


# OpenAI's automatic prompt caching: a prefix of 1,024 tokens or more, served in steps
# of 128 tokens, once the same prefix has been sent.
PROMPT_CACHE_MIN_TOKENS = 1024
PROMPT_CACHE_STEP_TOKENS = 128


def _chat_tokens(
    request: ChatRequest, count: TokenCounter, count_schema: bool
) -> tuple[int, int, tuple[str, ...]]:
    """The request's prompt tokens, those of its static prefix, and that prefix's text
    (the schema and every message before the judged data, the last one)."""
    schema = request_schema(request.options) if count_schema else None
    schema_tokens = count(schema) if schema else 0
    texts = [message_text(m) for m in request.messages]
    sizes = [count(text) + MESSAGE_OVERHEAD for text in texts]
    prefix = (schema or "", *(f"{m.type}:{text}" for m, text in zip(request.messages[:-1], texts)))
    return schema_tokens + sum(sizes), schema_tokens + sum(sizes[:-1]), prefix


def cache_served_tokens(prefix_tokens: int) -> int:
    """The tokens of a repeated static prefix a provider's prompt cache serves."""
    if prefix_tokens < PROMPT_CACHE_MIN_TOKENS:
        return 0
    steps = (prefix_tokens - PROMPT_CACHE_MIN_TOKENS) // PROMPT_CACHE_STEP_TOKENS
    return PROMPT_CACHE_MIN_TOKENS + steps * PROMPT_CACHE_STEP_TOKENS


def _price_models(models: Iterable[ModelEstimate]) -> None:
    for model in models:
        if model.price is not None:
            model.cost_low = model.price.cost(
                model.prompt_tokens, model.completion_tokens_low,
                cached_input_tokens=model.cached_input_tokens,
            )
            model.cost_high = model.price.cost(model.prompt_tokens, model.completion_tokens_high)


def _tally(
    recorder: Recorder, count: TokenCounter, count_schema: bool, prices: PriceTable | None,
    builtin_prices: bool, model_tokenizers: bool = True,
) -> dict[str, ModelEstimate]:
    models: dict[str, ModelEstimate] = {}

    def entry(label: str, model_id: str, kind: Literal["chat", "embedding"]) -> ModelEstimate:
        if label not in models:
            models[label] = ModelEstimate(
                label=label, model_id=model_id, kind=kind,
                price=price_for(label, model_id, prices=prices, builtin=builtin_prices),
            )
        return models[label]

    prefixes_sent: set[tuple[str, ...]] = set()
    for request in recorder.chat:
        model = entry(request.label, request.model_id, "chat")
        if request.cached:
            model.cached += 1
            continue
        model.requests += 1
        tokens, prefix_tokens, prefix = _chat_tokens(request, count, count_schema)
        model.prompt_tokens += tokens
        if (request.label, *prefix) in prefixes_sent:
            model.cached_input_tokens += cache_served_tokens(prefix_tokens)
        prefixes_sent.add((request.label, *prefix))
        low, high = completion_range(request.schema, count, request.intent, request.choices)
        model.completion_tokens_low += low
        model.completion_tokens_high += high
    for batch in recorder.embeddings:
        model = entry(batch.label, batch.model_id, "embedding")
        model.requests += 1
        # An embedding model's own tokenizer (the bundled local model has one) counts
        # its texts, unless the caller chose a counter.
        counter = batch.count_tokens if model_tokenizers and batch.count_tokens else count
        model.prompt_tokens += sum(counter(text) for text in batch.texts)
    for hit in recorder.embedding_hits:
        entry(hit.label, hit.model_id, "embedding").cached += 1
    _price_models(models.values())
    return models


def _total(models: dict[str, ModelEstimate]) -> EstimateTotal:
    total = EstimateTotal()
    for model in models.values():
        total.requests += model.requests
        total.cached += model.cached
        total.prompt_tokens += model.prompt_tokens
        total.cached_input_tokens += model.cached_input_tokens
        total.completion_tokens_low += model.completion_tokens_low
        total.completion_tokens_high += model.completion_tokens_high
    spending = [model for model in models.values() if model.requests]
    if all(model.price is not None for model in spending):
        total.cost_low = sum(model.cost_low or 0.0 for model in spending)
        total.cost_high = sum(model.cost_high or 0.0 for model in spending)
    return total


def combine(estimates: Sequence[CostEstimate]) -> CostEstimate:
    """The estimate of several runs one after the other (nothing shared between them):
    per model label, the sums; the costs as :func:`aestimate` gives them."""
    models: dict[str, ModelEstimate] = {}
    counts = ("requests", "cached", "prompt_tokens", "cached_input_tokens",
              "completion_tokens_low", "completion_tokens_high")  # fmt: skip
    for part in estimates:
        for label, model in part.models.items():
            if label not in models:
                models[label] = model.model_copy(update={"cost_low": None, "cost_high": None})
                continue
            into = models[label]
            for key in counts:
                setattr(into, key, getattr(into, key) + getattr(model, key))
    _price_models(models.values())
    return CostEstimate(
        models=models, total=_total(models), samples=sum(part.samples for part in estimates),
        dry_run_errors=sum(part.dry_run_errors for part in estimates),
        dry_run_failures=_failures(why for part in estimates
                                   for why, n in part.dry_run_failures.items() for _ in range(n)),
    )  # fmt: skip


@rejects_unknown_keywords()
async def aestimate(
    samples: Iterable[SampleLike],
    metrics: Sequence[AnswerMetric],
    *,
    prices: PriceTable | None = None,
    builtin_prices: bool = True,
    token_counter: Any = None,
    count_schema: bool = True,
    max_concurrency: int = 16,
) -> CostEstimate:
    """Async :func:`estimate` (the dry run runs in the caller's event loop).

    Args:
        samples: ``Sample``s, dicts or a DataFrame, read once.
        metrics: the metrics the run would score them with.
        prices: ``{label or model id: Price}``, before the built-in table.
        builtin_prices: also look prices up in the built-in table (a dated snapshot).
        token_counter: a function ``text -> int`` or a tokenizer, for every model.
        count_schema: count the tool / response-format definition as prompt tokens.
        max_concurrency: as for the run being estimated (it shapes embedding batches).

    Returns:
        As :func:`estimate`: per model label and in total, requests, tokens and cost.

    Raises:
        UnknownOptionError: a misspelt option (a ``TypeError``).

    Example:
        >>> plan = await aestimate(samples, [Faithfulness(llm=judge)])
    """
    recorder = Recorder()
    dry_metrics, dry = dry_run_metrics(metrics, recorder)
    # The dry run's replies are not the models': never traced (LANGSMITH_TRACING or not).
    with dry_run_cache(dry.cache_routes), tracing_context(enabled=False):
        options = RunOptions(max_concurrency=max_concurrency)
        rows = await Run(samples, dry_metrics, options).results()
    models = _tally(
        recorder, as_token_counter(token_counter), count_schema, prices, builtin_prices,
        model_tokenizers=token_counter is None,
    )
    flex = [models[label] for label in flex_labels(metrics) if label in models]
    for model in flex:  # OpenAI's flex service tier: the batch price (prices.py)
        model.price = model.price.discounted() if model.price is not None else None
    _price_models(flex)
    failed = [f"{outcome.key}: {outcome.message}" for row in rows
              for outcome in row.results.values() if isinstance(outcome, MetricError)]
    return CostEstimate(
        models=models, total=_total(models), samples=len(rows), dry_run_errors=len(failed),
        dry_run_failures=_failures(failed),
    )  # fmt: skip


def _failures(reasons: Iterable[str], *, kept: int = 3) -> dict[str, int]:
    """The first ``kept`` distinct reasons, with their counts."""
    counts = Counter(reasons)
    return {reason: counts[reason] for reason in list(counts)[:kept]}


@rejects_unknown_keywords(forwards_to=aestimate)
def estimate(
    samples: Iterable[SampleLike], metrics: Sequence[AnswerMetric], **options: Any
) -> CostEstimate:
    """Expected requests, tokens and cost of scoring ``samples`` with ``metrics``; sends
    no request, and traces nothing.

    ``samples`` are read once: pass a list (or a DataFrame) to run them afterwards, not a
    generator.

    Args:
        samples: ``Sample``s, dicts or a DataFrame.
        metrics: the metrics the run would score them with.
        **options: see Options below.

    Returns:
        Per model label the requests, prompt tokens, completion tokens and cost as a
        low/high range (cost ``None`` without a price), and their ``total``.

    Raises:
        UnknownOptionError: a misspelt option (a ``TypeError``).

    Example:
        >>> plan = estimate(samples, [Faithfulness(llm=judge)])
        >>> plan.models["gpt-4o-mini"].requests, plan.total.cost_high

    Options:
        prices: ``{label or model id: Price}``, before the built-in table
            (:data:`~langchain_answer_metrics.prices.BUILTIN_PRICES`, a dated snapshot;
            ``builtin_prices=False`` ignores it).
        token_counter: a function ``text -> int``, or a tokenizer (``get_num_tokens`` or
            ``encode``), for every model; default: an embedding model's own tokenizer
            when it has one offline (``count_tokens``, as the bundled local model), else
            :func:`~langchain_answer_metrics.costs.tokens.default_token_count`.
        count_schema: count the tool / response-format definition each chat request
            sends as prompt tokens (providers bill it; some local servers do not).
        max_concurrency: as for the run being estimated (it shapes embedding batches).
    """
    return run_sync(
        aestimate(samples, metrics, **options),
        max_concurrency=options.get("max_concurrency", 16),
    )
