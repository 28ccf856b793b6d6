"""The options of a run, validated once: what every public runner function takes.

    >>> options = RunOptions(max_concurrency=8, budget=2.0, checkpoint="run.jsonl")
    >>> rows = [row async for row in Run(samples, metrics, options).stream()]

``evaluate``, ``aevaluate``, ``astream_evaluate`` and ``stream_evaluate`` take these as
keyword-only arguments and build one :class:`RunOptions`; the CLI and the Ray adapter
build the same type.
"""

from __future__ import annotations

import math
import os
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from langchain_answer_metrics.judging.endpoints import DEFAULT_MAX_CONSECUTIVE_FAILURES
from langchain_answer_metrics.prices import PriceTable
from langchain_answer_metrics.run_results import ProgressCallback


class RunOptions(BaseModel):
    """How a run goes: concurrency, read-ahead, checkpoint, limits, circuit breaker.

    Example:
        >>> RunOptions(max_concurrency=4, max_requests=100).max_requests
        100
    """

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    max_concurrency: int = 16
    window: int | None = None
    on_progress: ProgressCallback | None = None
    config: Any = None  # a RunnableConfig (a TypedDict, passed on as given)
    checkpoint: str | os.PathLike[str] | None = None
    keep_degraded: bool = False
    budget: float | None = None
    max_requests: int | None = None
    prices: PriceTable | None = None
    max_consecutive_failures: int | None = DEFAULT_MAX_CONSECUTIVE_FAILURES

    @field_validator("max_concurrency")
    @classmethod
    def _at_least_one(cls, value: int) -> int:
        if value < 1:
            raise ValueError("max_concurrency must be at least 1")
        return value

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
