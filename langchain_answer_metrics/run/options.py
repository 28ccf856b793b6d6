"""The options of a run, declared once and validated once: what every public runner
function takes as keywords.

    >>> options = RunOptions(max_concurrency=8, budget=2.0, checkpoint="run.jsonl")
    >>> rows = [row async for row in Run(samples, metrics, options).stream()]

:class:`RunOptions` is the one declaration of a run's options (name, type, default and
what it does). ``evaluate_dataset``, ``aevaluate_dataset``, ``astream_evaluate`` and
``stream_evaluate`` take its fields as keyword-only arguments through
:func:`takes_run_options`, which gives each function that signature (for type checkers,
``inspect.signature`` and the API reference) and hands its body one ``RunOptions``. The
CLI and the Ray adapter build the same type.
"""

from __future__ import annotations

import functools
import inspect
import math
import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

from langchain_core.runnables import RunnableConfig
from pydantic import ConfigDict, Field, SkipValidation, field_validator
from pydantic.dataclasses import dataclass

from langchain_answer_metrics.core.prices import PriceTable
from langchain_answer_metrics.core.sample import SampleLike
from langchain_answer_metrics.core.strict_options import check_options
from langchain_answer_metrics.judging.batch.rounds import (
    DEFAULT_BATCH_MIN_REQUESTS,
    RoundStatus,
    seconds_of,
)
from langchain_answer_metrics.judging.limits import (
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_MAX_CONSECUTIVE_FAILURES,
)
from langchain_answer_metrics.metrics.base import AnswerMetric
from langchain_answer_metrics.run.results import ProgressCallback

P = ParamSpec("P")
R = TypeVar("R")


# A pydantic dataclass rather than a BaseModel: type checkers read its keyword-only
# __init__ as declared, which is what the public functions' signatures are copied from.
@dataclass(
    frozen=True,
    kw_only=True,
    config=ConfigDict(extra="forbid", arbitrary_types_allowed=True, use_attribute_docstrings=True),
)
class RunOptions:
    """How a run goes: concurrency, read-ahead, checkpoint, limits, circuit breaker.

    Example:
        >>> RunOptions(max_concurrency=4, max_requests=100).max_requests
        100
    """

    max_concurrency: int = DEFAULT_MAX_CONCURRENCY
    """Model requests in flight at most, across all metrics and models."""
    window: int | None = None
    """Samples read ahead at most (default ``max(256, 8 * max_concurrency)``, or enough
    for ``2 * max_concurrency`` full batches for embedding metrics alone)."""
    on_progress: ProgressCallback | None = None
    """Called with a ``Progress`` as samples finish."""
    config: SkipValidation[RunnableConfig | None] = None  # passed on as given
    """A LangChain ``RunnableConfig`` for the metrics' runs (callbacks, tags)."""
    checkpoint: str | os.PathLike[str] | None = None
    """A JSONL file that keeps each finished sample; a rerun skips them."""
    keep_degraded: bool = False
    """On a rerun, keep saved samples where a model was excluded."""
    id_key: str | None = "id"
    """The key (a dict's, a DataFrame's column) holding each sample's id in the checkpoint,
    as the CLI's ``--id-col``; a sample without one, and every sample for ``None``, is
    numbered from 1. Ids must be unique."""
    budget: float | None = None
    """USD not to go past (every model needs a price); samples that would are not started."""
    max_requests: int | None = None
    """Requests not to go past, as ``budget``."""
    prices: PriceTable | None = None
    """``{label or model id: Price}``, before the built-in table."""
    max_consecutive_failures: int | None = DEFAULT_MAX_CONSECUTIVE_FAILURES
    """Failed requests in a row to one endpoint that stop the run (the circuit breaker);
    ``None``: never."""
    batch: bool = False
    """Send the OpenAI judges' and embedders' requests through the Batch API (half the
    price, in minutes to hours; docs/batch.md). Other judges and embedders run live."""
    batch_embeddings: bool = True
    """In batch mode, send the OpenAI embedders' requests through the Batch API too
    (``False``: live, at the live price); an endpoint that refuses embeddings batches
    sends them live, saying so."""
    batch_poll_s: float = Field(default=30.0, gt=0)
    """Seconds between polls of the batches in flight."""
    batch_wait: float | str | None = None
    """How long to wait for batches at most (seconds, or ``"90m"``, ``"2h"``); past it the
    run stops, resumable (``RunStop.reason == "batch_wait"``). None: no bound."""
    batch_min_requests: int = Field(default=DEFAULT_BATCH_MIN_REQUESTS, ge=0)
    """Estimated requests below which batch mode runs live instead (0: always batch)."""
    batch_max_requests: int = Field(default=50_000, ge=1)
    """Lines per batch file at most (OpenAI's limit: 50,000)."""
    batch_max_bytes: int = Field(default=200 * 1024 * 1024, ge=1024)
    """Bytes per batch file at most (OpenAI's limit: 200 MB)."""
    batch_keep_files: bool = False
    """Keep the uploaded input files at the provider after their batch ended."""
    batch_state: str | os.PathLike[str] | None = None
    """Where the run's batches are kept for a resume (default: in the checkpoint, beside
    its samples' records; without a checkpoint, nowhere). A ``.batches`` side file of an
    earlier version is read, and goes on being written."""
    on_batch_status: Callable[[RoundStatus], None] | None = None
    """Called with a ``RoundStatus`` at every poll of the batches."""

    @field_validator("max_concurrency")
    @classmethod
    def _at_least_one(cls, value: int) -> int:
        if value < 1:
            raise ValueError("max_concurrency must be at least 1")
        return value

    @field_validator("batch_wait")
    @classmethod
    def _duration(cls, value: float | str | None) -> float | None:
        return None if value is None else seconds_of(value)

    @field_validator("budget")
    @classmethod
    def _usd(cls, value: float | None) -> float | None:
        if value is not None and (math.isnan(value) or value < 0):
            raise ValueError(f"budget must be a number of USD >= 0, got {value!r}")
        return value

    @field_validator("max_requests")
    @classmethod
    def _requests(cls, value: int | None) -> int | None:
        if value is not None and value < 0:
            raise ValueError(f"max_requests must be >= 0, got {value!r}")
        return value


Body = Callable[[Iterable[SampleLike], Sequence[AnswerMetric], RunOptions], R]
Public = Callable[Concatenate[Iterable[SampleLike], Sequence[AnswerMetric], P], R]


def keywords_of(options: Callable[P, RunOptions]) -> Callable[[Body[R]], Public[P, R]]:
    """A decorator turning ``body(samples, metrics, options)`` into ``f(samples, metrics,
    *, <the keyword parameters of options>)``, typed by ``options``' constructor (so type
    checkers see each keyword with its type and default) and with that signature at run
    time (``inspect.signature``, the API reference). A misspelt keyword raises
    :class:`~langchain_answer_metrics.core.strict_options.UnknownOptionError` naming the
    closest option; a bad value, RunOptions' ValueError. For a coroutine function both
    are raised when it is awaited, before its body runs.

    Example:
        >>> @keywords_of(RunOptions)
        ... async def aevaluate_dataset(samples, metrics, options: RunOptions): ...
        >>> await aevaluate_dataset(rows, metrics, max_concurrency=4)
    """
    names = tuple(inspect.signature(options).parameters)
    build = cast(Callable[..., RunOptions], options)

    def decorate(body: Body[R]) -> Public[P, R]:
        owner = body.__name__

        def options_of(keywords: dict[str, Any]) -> RunOptions:
            check_options(owner, keywords, names)  # a typo named, with a guess
            return build(**keywords)

        public: Callable[..., Any]
        if inspect.iscoroutinefunction(body):

            async def public(samples: Any, metrics: Any, **keywords: Any) -> Any:
                return await body(samples, metrics, options_of(keywords))

        else:

            def public(samples: Any, metrics: Any, **keywords: Any) -> Any:
                return body(samples, metrics, options_of(keywords))

        functools.update_wrapper(public, body)
        del public.__dict__["__wrapped__"]  # its own signature is set below
        signature = inspect.signature(body)
        own = list(signature.parameters.values())[:2]
        keywords = inspect.signature(options).parameters.values()
        public.__dict__["__signature__"] = signature.replace(parameters=[*own, *keywords])
        return cast(Public[P, R], public)

    return decorate


takes_run_options = keywords_of(RunOptions)
"""``@takes_run_options``: the public runner functions' keywords are RunOptions' fields."""
