"""What a run gives back: a row per sample, progress reports, why a run stopped early.

>>> rows = evaluate(samples, metrics)
>>> rows[0].results["faithfulness"].score     # a MetricResult, or a MetricError
>>> [row.index for row in rows if row.not_run], rows.stopped
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from langchain_answer_metrics.core.result import MetricResult, TokenUsage

if TYPE_CHECKING:
    from langchain_answer_metrics.run.spend import Spend

NOT_RUN = "NotRun"
"""The ``error_type`` of a metric outcome for a sample the run did not start."""

StopReason = Literal["budget", "max_requests", "circuit_breaker", "batch_wait", "batch_failed"]


class RunStop(BaseModel):
    """Why a run stopped before the end of its input."""

    reason: StopReason
    message: str
    not_run: int = 0


class MetricError(BaseModel):
    """A metric that could not score a sample, in that sample's place in a dataset run.

    Attributes:
        key: the metric's key.
        error_type: the error's class name (``"NotRun"`` for a sample the run did not start).
        message: the error's message (secrets redacted).
        stop_reason: for a sample the run did not start: why (``"budget"`` ...).
        usage: what each model spent on the sample before the metric failed.

    Example:
        >>> rows = evaluate_dataset([sample, {"response": "No contexts."}], [faithfulness])
        >>> rows[1].results["faithfulness"].score, rows[1].errors["faithfulness"].error_type
        (None, 'InvalidSampleError')
    """

    key: str
    error_type: str
    message: str
    stop_reason: StopReason | None = Field(
        default=None, description="For a sample the run did not start: why."
    )
    usage: dict[str, TokenUsage] = Field(
        default_factory=dict,
        description="What each model spent on the sample before the metric failed.",
    )

    @property
    def score(self) -> None:
        """None, as a failed metric has no score: a loop over ``row.results`` can read
        ``.score`` on a ``MetricResult`` and a ``MetricError`` alike."""
        return None

    @property
    def ok(self) -> bool:
        """False: the metric failed on this sample (a ``MetricResult``'s ``ok`` is True)."""
        return False


class SampleResults(BaseModel):
    """Every metric's outcome for one sample, at its position in the input (``index``):
    ``results[key]`` is a ``MetricResult`` or a ``MetricError``; ``errors`` the latter.

    Attributes:
        index: the sample's position in the input, from 0.
        results: per metric key, a ``MetricResult`` or a ``MetricError``.

    Example:
        >>> for row in evaluate_dataset(samples, [faithfulness]):
        ...     outcome = row.results["faithfulness"]
        ...     print(row.index, outcome.score if outcome.ok else outcome.message)
    """

    index: int
    results: dict[str, MetricResult | MetricError]

    @property
    def errors(self) -> dict[str, MetricError]:
        """The metrics that failed on this sample (not a sample the run did not start)."""
        if self.not_run:
            return {}
        return {
            key: outcome
            for key, outcome in self.results.items()
            if isinstance(outcome, MetricError)
        }

    def checkpoint_outcomes(self) -> dict[str, dict[str, Any]]:
        """Each outcome as a checkpoint line keeps it: ``{"result": ...}`` or
        ``{"error": ...}``."""
        return {
            key: {"result": outcome.model_dump(mode="json")}
            if isinstance(outcome, MetricResult)
            else {"error": outcome.model_dump(mode="json")}
            for key, outcome in self.results.items()
        }

    @property
    def not_run(self) -> bool:
        """The run stopped before this sample (a budget, a failing endpoint): no score,
        nothing spent, nothing checkpointed; a rerun scores it."""
        return bool(self.results) and all(
            isinstance(outcome, MetricError) and outcome.error_type == NOT_RUN
            for outcome in self.results.values()
        )


class Progress(BaseModel):
    """How far a run has got; passed to ``on_progress`` after each sample, and every
    :data:`PROGRESS_EVERY` seconds while the next sample is still being scored."""

    done: int
    errors: int = Field(description="Samples with at least one metric error.")
    total: int | None
    elapsed: float
    requests_done: int = Field(default=0, description="Model requests finished so far.")
    requests_in_flight: int = Field(default=0, description="Model requests out right now.")
    not_run: int = Field(default=0, description="Samples the run stopped before.")

    @property
    def rate(self) -> float:
        return self.done / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def eta(self) -> float | None:
        """Seconds left at the rate so far (None before the first sample or without a
        total)."""
        if self.total is None or not self.done or self.elapsed <= 0:
            return None
        return (self.total - self.done) / self.rate


PROGRESS_EVERY = 2.0
"""Seconds between progress reports while no sample finishes."""


ProgressCallback = Callable[[Progress], None]


class EvaluationResults(list[SampleResults]):
    """The rows of a run, in input order (a list); :meth:`to_pandas` gives a DataFrame."""

    inputs: Any = None  # the input DataFrame, when the run was given one
    stopped: RunStop | None = None  # why samples were not run, if the run stopped early
    pricing: Any = None  # the run's spend.Pricing (its models and prices)

    def __init__(
        self,
        rows: Iterable[SampleResults] = (),
        *,
        inputs: Any = None,
        stopped: RunStop | None = None,
        pricing: Any = None,
    ) -> None:
        super().__init__(rows)
        self.inputs, self.stopped, self.pricing = inputs, stopped, pricing

    def spend(self, prices: Mapping[str, Any] | None = None) -> Spend:
        """What the run spent (a :class:`~langchain_answer_metrics.run.spend.Spend`): requests,
        tokens and cost per model (``.models``), per metric and model (``.metrics``) and in
        all (``.total``), replies served from cache counted apart (``cached``, at no cost).
        Priced by ``prices`` (``{label or model id: Price}``), then the run's ``prices=``,
        then the built-in table; a cost is None where a model that spent has no price."""
        from langchain_answer_metrics.run.spend import Pricing, tally

        run = self.pricing if isinstance(self.pricing, Pricing) else Pricing()
        pricing = Pricing(
            run.model_ids,
            prices={**run.prices, **(prices or {})},
            builtin=run.builtin,
            discounted=run.discounted,
            local=run.local,
        )
        return tally((row.results for row in self), pricing)

    def to_pandas(self, inputs: Any = None) -> Any:
        """The rows as a pandas DataFrame: the input columns (``inputs``, or the DataFrame
        the run was given) and per metric ``<key>_score/_passed/_reason/_error/_result``;
        see :mod:`langchain_answer_metrics.run.tables`."""
        from langchain_answer_metrics.run.tables import to_pandas

        return to_pandas(self, inputs if inputs is not None else self.inputs)


def not_run_row(index: int, keys: Sequence[str], stop: RunStop) -> SampleResults:
    """The row of a sample the run stopped before."""
    return SampleResults(
        index=index,
        results={
            key: MetricError(
                key=key,
                error_type=NOT_RUN,
                message=f"not run: {stop.message}",
                stop_reason=stop.reason,
            )
            for key in keys
        },
    )


def run_stop(rows: Sequence[SampleResults]) -> RunStop | None:
    """Why a run's ``not_run`` rows were not run (None if every sample ran)."""
    skipped = [row for row in rows if row.not_run]
    if not skipped:
        return None
    first = next(iter(skipped[0].results.values()))
    assert isinstance(first, MetricError) and first.stop_reason is not None
    return RunStop(
        reason=first.stop_reason,
        message=first.message.removeprefix("not run: "),
        not_run=len(skipped),
    )


def is_frame(samples: Any) -> bool:
    """Whether ``samples`` is a pandas DataFrame (duck-typed; pandas is not imported here)."""
    return hasattr(samples, "columns") and callable(getattr(samples, "itertuples", None))


def rows_of(samples: Any, required: Iterable[str] = (), *, id_key: str | None = "id") -> Any:
    """The samples to score: dict rows and DataFrames have their fields found by name
    (``question``, ``answer``...), as for dataset rows, and their ``id_key`` kept as their
    id; see :func:`~langchain_answer_metrics.run.tables.run_inputs`."""
    from langchain_answer_metrics.run.tables import run_inputs

    return run_inputs(samples, required, id_key=id_key)
