"""What a run will cost, before it runs: :func:`estimate` sends no request.

    >>> plan = estimate(samples, [FactualCorrectness(llm=judge), Faithfulness(llm=judge)])
    >>> plan.models["gpt-4o-mini"].requests, plan.total.cost_high

It is a dry run of the package's own logic: the metrics are copied with their models
replaced by offline stand-ins (:mod:`.dry_run`) that keep the real labels, methods and
sampling of ``n`` choices, and streamed through the run's own engine
(:class:`~langchain_answer_metrics.run.engine.Run`). So what the runner shares (one
decomposition for several metrics, repeated references, batched embeddings, ``n``-sampled
votes) is counted exactly as a real run does it, and
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
from typing import Any

from langsmith.run_helpers import tracing_context
from pydantic import BaseModel, Field

from langchain_answer_metrics.core.prices import PriceTable
from langchain_answer_metrics.core.sample import SampleLike
from langchain_answer_metrics.core.strict_options import rejects_unknown_keywords
from langchain_answer_metrics.judging.limits import DEFAULT_MAX_CONCURRENCY
from langchain_answer_metrics.judging.sync import run_sync
from langchain_answer_metrics.metrics.base import AnswerMetric
from langchain_answer_metrics.run.engine import Run
from langchain_answer_metrics.run.estimate.dry_run import dry_run_cache, dry_run_metrics
from langchain_answer_metrics.run.estimate.tally import (
    PROMPT_CACHE_MIN_TOKENS,
    PROMPT_CACHE_STEP_TOKENS,
    EstimateTotal,
    ModelEstimate,
    Recorder,
    Tally,
    cache_served_tokens,
    price_models,
    total_of,
)
from langchain_answer_metrics.run.estimate.tokens import as_token_counter
from langchain_answer_metrics.run.options import RunOptions
from langchain_answer_metrics.run.results import MetricError, SampleResults
from langchain_answer_metrics.run.spend import flex_labels, local_labels

__all__ = [
    "PROMPT_CACHE_MIN_TOKENS",
    "PROMPT_CACHE_STEP_TOKENS",
    "CostEstimate",
    "EstimateTotal",
    "ModelEstimate",
    "aestimate",
    "cache_served_tokens",
    "combine",
    "estimate",
]


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
        default=0,
        description="Metric outcomes that failed in the dry run (bad samples "
        "are refused before any request, so they cost nothing in a real run either).",
    )
    dry_run_failures: dict[str, int] = Field(default_factory=dict)
    """Why they failed: the first distinct ``"<metric>: <error>"``, each with its count."""

    def as_dict(self) -> dict[str, Any]:
        """Per model label ``requests``, ``prompt_tokens``, ``completion_tokens_low/high``,
        ``cost_low/high`` (None without a price), and ``total``: JSON-ready."""
        keys = (
            "requests",
            "cached",
            "prompt_tokens",
            "cached_input_tokens",
            "completion_tokens_low",
            "completion_tokens_high",
            "cost_low",
            "cost_high",
        )
        out: dict[str, Any] = {
            label: {key: getattr(model, key) for key in keys}
            for label, model in self.models.items()
        }
        out["total"] = {key: getattr(self.total, key) for key in keys}
        return out


def combine(estimates: Sequence[CostEstimate]) -> CostEstimate:
    """The estimate of several runs one after the other (nothing shared between them):
    per model label, the sums; the costs as :func:`aestimate` gives them."""
    models: dict[str, ModelEstimate] = {}
    counts = (
        "requests",
        "cached",
        "prompt_tokens",
        "cached_input_tokens",
        "completion_tokens_low",
        "completion_tokens_high",
    )
    for part in estimates:
        for label, model in part.models.items():
            if label not in models:
                models[label] = model.model_copy(update={"cost_low": None, "cost_high": None})
                continue
            into = models[label]
            for key in counts:
                setattr(into, key, getattr(into, key) + getattr(model, key))
    price_models(models.values())
    return CostEstimate(
        models=models,
        total=total_of(models),
        samples=sum(part.samples for part in estimates),
        dry_run_errors=sum(part.dry_run_errors for part in estimates),
        dry_run_failures=_failures(
            why for part in estimates for why, n in part.dry_run_failures.items() for _ in range(n)
        ),
    )


@rejects_unknown_keywords()
async def aestimate(
    samples: Iterable[SampleLike],
    metrics: Sequence[AnswerMetric],
    *,
    prices: PriceTable | None = None,
    builtin_prices: bool = True,
    token_counter: Any = None,
    count_schema: bool = True,
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
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
    tally = Tally(
        as_token_counter(token_counter),
        count_schema,
        prices,
        builtin_prices,
        model_tokenizers=token_counter is None,
        local=local_labels(metrics),
    )
    samples_seen = errors = 0
    failures: dict[str, int] = {}
    # The dry run's replies are not the models': never traced (LANGSMITH_TRACING or not).
    with dry_run_cache(dry.cache_routes), tracing_context(enabled=False):
        options = RunOptions(max_concurrency=max_concurrency)
        # Streamed as the real run streams: each finished sample's requests are tallied
        # and dropped, so memory stays flat however many samples (issue 30 §5).
        async for row in Run(samples, dry_metrics, options).stream():
            samples_seen += 1
            errors += _count_failures(failures, row)
            tally.add(recorder.drain())
    tally.add(recorder.drain())
    models = tally.priced()
    flex = [models[label] for label in flex_labels(metrics) if label in models]
    for model in flex:  # OpenAI's flex service tier: the batch price (prices.py)
        model.price = model.price.discounted() if model.price is not None else None
    price_models(flex)
    return CostEstimate(
        models=models,
        total=total_of(models),
        samples=samples_seen,
        dry_run_errors=errors,
        dry_run_failures=failures,
    )


def _failures(reasons: Iterable[str], *, kept: int = 3) -> dict[str, int]:
    """The first ``kept`` distinct reasons, with their counts."""
    counts = Counter(reasons)
    return {reason: counts[reason] for reason in list(counts)[:kept]}


def _count_failures(failures: dict[str, int], row: SampleResults, *, kept: int = 3) -> int:
    """Add ``row``'s metric errors to ``failures``: the first ``kept`` distinct reasons
    with their counts (the others are only counted, so the dict stays small); returns how
    many errors the row has."""
    reasons = [
        f"{outcome.key}: {outcome.message}"
        for outcome in row.results.values()
        if isinstance(outcome, MetricError)
    ]
    for reason in reasons:
        if reason in failures or len(failures) < kept:
            failures[reason] = failures.get(reason, 0) + 1
    return len(reasons)


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
            (:data:`~langchain_answer_metrics.core.prices.BUILTIN_PRICES`, a dated snapshot;
            ``builtin_prices=False`` ignores it).
        token_counter: a function ``text -> int``, or a tokenizer (``get_num_tokens`` or
            ``encode``), for every model; default: an embedding model's own tokenizer
            when it has one offline (``count_tokens``, as the bundled local model), else
            :func:`~langchain_answer_metrics.run.estimate.tokens.default_token_count`.
        count_schema: count the tool / response-format definition each chat request
            sends as prompt tokens (providers bill it; some local servers do not).
        max_concurrency: as for the run being estimated (it shapes embedding batches).
    """
    return run_sync(
        aestimate(samples, metrics, **options),
        max_concurrency=options.get("max_concurrency", DEFAULT_MAX_CONCURRENCY),
    )
