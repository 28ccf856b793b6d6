"""Score a Ray Data ``Dataset`` on a pool of actors: past one machine, no runner of our own.

    >>> import ray
    >>> from langchain_answer_metrics.ray import evaluate_dataset
    >>> ds = ray.data.read_parquet("s3://bucket/answers/")
    >>> scored = evaluate_dataset(ds, metrics=["faithfulness", "factual_correctness"],
    ...                           config="models.yaml", actors=8, max_concurrency=64)
    >>> scored.write_parquet("s3://bucket/scored/")

The result has the input columns plus, per metric key, ``<key>_score``, ``<key>_passed``,
``<key>_reason``, ``<key>_error`` (null when scored) and ``<key>_result`` (the whole
:class:`MetricResult` as JSON); see :mod:`.dataframes`.

How it runs:

- ``map_batches`` over an actor pool of ``actors`` actors. Model clients cannot be
  pickled, so each actor builds its metrics once, in its own process, from
  ``metrics`` names and a ``config`` (a models.yaml path or its parsed mapping, read on
  the driver and shipped as data: the workers need the API keys it names in their
  environment, not the file), or from ``metrics``, a zero-argument factory returning
  the metrics. A factory may instead take one argument, the actor's :class:`ActorShare`.
- Each batch goes through the package's async runner (:func:`~..runner.aevaluate`), so
  within a batch identical calls are shared, embeddings batched and the request budget
  kept. Larger batches share more.
- **One global budget, split.** ``max_concurrency`` is the requests in flight across the
  whole pool: each actor gets ``max_concurrency // actors`` (so it must be at least
  ``actors``). A provider's ``rate_limit`` in the config is read as the global rate of
  that provider and each actor's limiter gets ``rate_limit / actors``; a factory gets the
  same numbers in its :class:`ActorShare` (``share.rate_limiter(rps)``). N actors
  therefore never send more than the provider's rate between them.
- **Limits per actor.** ``budget`` (USD; priced by ``prices``, then the built-in
  table) and ``max_requests`` are split like ``max_concurrency``: each actor
  gets ``budget / actors`` and ``max_requests // actors``, carried across its batches
  (:class:`~..run_limits.RunLimits`), so the pool stays within about the totals; rows an
  actor's limit stops before have ``<key>_error`` "not run". A restarted actor starts its
  share afresh. ``max_consecutive_failures`` (the circuit breaker) applies in each actor.
- Errors stay per row (``<key>_error``). An actor that dies is restarted by Ray and its
  batch re-run (Ray Data's defaults for actor pools: ``max_restarts=-1``,
  ``max_task_retries=-1``; do not lower them): a batch's rows are emitted
  once, when the batch finishes, so no row is lost or duplicated (the dead actor's
  requests are sent again).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.rate_limiters import InMemoryRateLimiter

from langchain_answer_metrics.core.prices import PriceTable
from langchain_answer_metrics.judging.limits import (
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_MAX_CONSECUTIVE_FAILURES,
)
from langchain_answer_metrics.judging.sync import BlockingSession
from langchain_answer_metrics.mapping import SampleMapping
from langchain_answer_metrics.metrics.base import AnswerMetric
from langchain_answer_metrics.run.limits import RunLimits
from langchain_answer_metrics.run.runner import RunOptions, run_of
from langchain_answer_metrics.run.spend import Pricing
from langchain_answer_metrics.run.tables import (
    RESULT_SUFFIXES,
    outcome_cells,
    plain,
)

if TYPE_CHECKING:
    import pyarrow as pa
    import ray.data

MetricSpec = str | tuple[str, Mapping[str, Any]]
"""A metric by its registry name (``"faithfulness"``), or with settings
(``("aspect_critic", {"criterion": "conciseness"})``)."""

MetricFactory = Callable[..., Sequence[AnswerMetric]]


@dataclass(frozen=True)
class ActorShare:
    """One actor's part of the pool's global limits."""

    actors: int
    max_concurrency: int
    """This actor's request budget: the global ``max_concurrency // actors``."""

    @property
    def fraction(self) -> float:
        return 1.0 / self.actors

    def rate_limiter(self, requests_per_second: float) -> InMemoryRateLimiter:
        """A limiter for this actor's share of a global ``requests_per_second``."""
        rate = requests_per_second / self.actors
        return InMemoryRateLimiter(
            requests_per_second=rate,
            check_every_n_seconds=min(0.1, 0.5 / rate),
            max_bucket_size=1,
        )


def split_config(data: Mapping[str, Any], actors: int) -> dict[str, Any]:
    """A models.yaml mapping whose providers' ``rate_limit`` is divided by ``actors``."""
    copy = dict(data)
    providers = copy.get("providers")
    if isinstance(providers, Mapping):
        copy["providers"] = {
            name: (
                {**provider, "rate_limit": provider["rate_limit"] / actors}
                if isinstance(provider, Mapping) and provider.get("rate_limit") is not None
                else provider
            )
            for name, provider in providers.items()
        }
    return copy


def build_from_config(
    specs: Sequence[MetricSpec], data: Mapping[str, Any], share: ActorShare
) -> list[AnswerMetric]:
    """The named metrics with the config's models (embeddings: the config's, else the
    bundled local model), every provider's rate limit split across the actors."""
    from langchain_answer_metrics.config import panel_from_mapping
    from langchain_answer_metrics.metrics.registry import METRICS, MetricModels

    entries = [(METRICS[_name(spec)], _settings(spec)) for spec in specs]
    panel = panel_from_mapping(split_config(data, share.actors), source="ray config")
    models = MetricModels(judges=list(panel.judges), embedders=list(panel.embedders))
    if any(entry.needs_embeddings for entry, _ in entries) and not panel.embedders:
        from langchain_answer_metrics.adapters.local_embeddings import (
            LOCAL_BASELINE,
            LocalE5Embeddings,
        )
        from langchain_answer_metrics.judging.judges import as_embedders

        models = MetricModels(
            models.judges, as_embedders(LocalE5Embeddings()), embedding_baseline=LOCAL_BASELINE
        )
    return [entry.build(models, settings) for entry, settings in entries]


def _name(spec: MetricSpec) -> str:
    return spec if isinstance(spec, str) else spec[0]


def _settings(spec: MetricSpec) -> dict[str, Any]:
    return {} if isinstance(spec, str) else dict(spec[1])


class _Scorer:
    """The actor: builds the metrics once, then scores batches (Arrow tables)."""

    def __init__(
        self,
        specs: Sequence[MetricSpec] | None,
        config: Mapping[str, Any] | None,
        factory: MetricFactory | None,
        share: ActorShare,
        columns: Mapping[str, str],
        limits: RunLimits | None = None,
    ) -> None:
        if factory is not None:
            takes_share = bool(inspect.signature(factory).parameters)
            metrics = list(factory(share) if takes_share else factory())
        else:
            metrics = build_from_config(specs or (), config or {}, share)
        self.metrics = metrics
        self.keys = [metric.key for metric in metrics]
        self.share = share
        self.columns = dict(columns)
        # This actor's share of the limits, carried across its batches.
        self.limits = limits or RunLimits()
        self.limits.pricing = Pricing.of(metrics, prices=self.limits.prices)
        # One private loop and model thread pool for the actor's life, sized to its budget.
        self.session = BlockingSession(share.max_concurrency)

    def __call__(self, batch: pa.Table) -> pa.Table:
        import pyarrow as pa

        types = {
            "score": pa.float64(),
            "passed": pa.bool_(),
            "reason": pa.string(),
            "error": pa.string(),
            "result": pa.string(),
        }
        records = [{k: plain(v) for k, v in row.items()} for row in batch.to_pylist()]
        # Read as every other face reads rows: a value of the wrong type is kept, so the
        # metric that needs it names the field and what it holds.
        mapping = SampleMapping.for_rows(**self.columns)
        samples = [mapping.fields_of(record, metric="ray row") for record in records]
        options = RunOptions(max_concurrency=self.share.max_concurrency, **self.limits.left())
        rows = self.session.run(run_of(samples, self.metrics, options).results())
        for row in rows:
            self.limits.count(row)
        for key in self.keys:
            cells = [outcome_cells(key, row.results[key]) for row in rows]
            for suffix in RESULT_SUFFIXES:
                name = f"{key}_{suffix}"
                column = pa.array([cell[name] for cell in cells], type=types[suffix])
                batch = batch.append_column(name, column)
        return batch


def evaluate_dataset(
    ds: ray.data.Dataset,
    metrics: Sequence[MetricSpec] | MetricFactory,
    *,
    config: str | Path | Mapping[str, Any] | None = None,
    actors: int = 2,
    batch_size: int = 64,
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
    num_cpus: float = 1,
    columns: Mapping[str, str] | None = None,
    budget: float | None = None,
    max_requests: int | None = None,
    prices: PriceTable | None = None,
    max_consecutive_failures: int | None = DEFAULT_MAX_CONSECUTIVE_FAILURES,
    **map_batches_options: Any,
) -> ray.data.Dataset:
    """``ds`` with the result columns of every metric added (lazily, as Ray Data does).

    ``metrics``: registry names (with ``config``), or a factory run once per actor.
    ``columns`` maps sample fields to columns where the default names do not find them
    (``{"response": "answer_text"}``). ``actors`` is the pool size, ``batch_size`` the rows
    per batch, ``max_concurrency`` the requests in flight across the whole pool (split:
    see the module's notes), ``num_cpus`` what each actor reserves. ``budget``,
    ``max_requests``, ``prices`` and ``max_consecutive_failures`` are the runner's, split
    per actor (see the module's notes). Other keyword arguments go to ``map_batches``
    (``runtime_env=...``, ``memory=...``).
    """
    if actors < 1:
        raise ValueError("actors must be at least 1")
    if max_concurrency < actors:
        raise ValueError(
            f"max_concurrency ({max_concurrency}) is split across {actors} actors and each "
            f"needs at least one request in flight: raise it to {actors} or use fewer actors"
        )
    share = ActorShare(actors=actors, max_concurrency=max_concurrency // actors)
    # Checked here, on the driver, before any actor starts.
    checked = RunOptions(
        budget=budget, max_requests=max_requests, max_consecutive_failures=max_consecutive_failures
    )
    limits = RunLimits(
        max_cost=None if checked.budget is None else checked.budget / actors,
        max_requests=None if max_requests is None else max_requests // actors,
        prices=dict(prices or {}),
        max_consecutive_failures=max_consecutive_failures,
    )
    factory: MetricFactory | None = None
    specs: list[MetricSpec] | None = None
    data: dict[str, Any] | None = None
    if callable(metrics):
        if config is not None:
            raise ValueError("pass config= with metric names, not with a factory")
        factory = metrics
    else:
        specs = list(metrics)
        data = _config_data(config)
        _check_specs(specs)
    # Ray Data gives actor pools max_restarts=-1 and max_task_retries=-1 by default: a
    # dead actor is restarted and its batch re-run.
    import ray.data

    return ds.map_batches(
        _Scorer,
        compute=ray.data.ActorPoolStrategy(size=actors),
        fn_constructor_args=(specs, data, factory, share, dict(columns or {}), limits),
        batch_size=batch_size,
        batch_format="pyarrow",
        num_cpus=num_cpus,
        zero_copy_batch=False,
        **map_batches_options,
    )


def _config_data(config: str | Path | Mapping[str, Any] | None) -> dict[str, Any]:
    """The models.yaml mapping, read here on the driver and checked (not built: the
    workers read the keys from their own environment)."""
    from langchain_answer_metrics.config import ConfigError
    from langchain_answer_metrics.config.errors import config_error, validation_problems
    from langchain_answer_metrics.config.schema import ModelsConfig
    from langchain_answer_metrics.config.yaml_file import parse_yaml

    if config is None:
        raise ValueError("metric names need config= (a models.yaml path or its mapping)")
    if isinstance(config, Mapping):
        data, source = dict(config), "config"
    else:
        source = str(config)
        try:
            text = Path(config).expanduser().read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise ConfigError(f"cannot read config file {source}: {error}") from None
        # The CLI's reading: a line named for a problem, a bomb refused, never a RecursionError.
        data = parse_yaml(text, source=source)
        if not isinstance(data, dict):
            raise ConfigError(f"{source}: the top level must be a mapping")
    from pydantic import ValidationError

    try:
        ModelsConfig.model_validate(data)
    except ValidationError as error:
        raise config_error(source, validation_problems(error)) from None
    return data


def _check_specs(specs: Sequence[MetricSpec]) -> None:
    from langchain_answer_metrics.metrics.registry import METRIC_NAMES, METRICS

    if not specs:
        raise ValueError("choose at least one metric")
    for spec in specs:
        if _name(spec) not in METRICS:
            raise ValueError(
                f"unknown metric {_name(spec)!r}; choose from {', '.join(METRIC_NAMES)}"
            )
