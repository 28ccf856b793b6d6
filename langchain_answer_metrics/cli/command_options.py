"""The typed options of each command, built once from the parsed arguments.

One frozen, keyword-only dataclass per option group
(:mod:`~langchain_answer_metrics.cli.option_groups`: :class:`JudgeOptions`,
:class:`LimitOptions`, :class:`BatchOptions`, :class:`OutputOptions`,
:class:`MetricChoice`, :class:`Columns`), and one per command, made of the groups it takes.
:func:`options_of` is the one reading of an ``argparse.Namespace``: the command's entry
point (:func:`~langchain_answer_metrics.cli.command.main`) calls it, and everything below
takes the typed object, or plain values from it. Light: it is built before the run's
machinery is loaded.

    >>> from langchain_answer_metrics.cli.parser import build_parser
    >>> args = build_parser().parse_args(["evaluate", "qa.jsonl", "--max-cost", "2"])
    >>> options = options_of(args)
    >>> options.limits.max_cost, options.limits.max_concurrency
    (2.0, 16)
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from langchain_answer_metrics.cli.formats import Format
from langchain_answer_metrics.cli.options import COLUMN_FLAGS
from langchain_answer_metrics.judging.batch.rounds import DEFAULT_BATCH_MIN_REQUESTS
from langchain_answer_metrics.judging.limits import DEFAULT_MAX_CONCURRENCY
from langchain_answer_metrics.metrics.registry import metric_settings

if TYPE_CHECKING:
    from langchain_answer_metrics.cli.datasets import ColumnMapping

PerMetric = tuple[tuple[str | None, float], ...]  # (a metric, or None for all; its value)

_Group = TypeVar("_Group")


def _read(cls: type[_Group], args: argparse.Namespace, **renamed: str) -> _Group:
    """``cls`` from the attributes of ``args`` named as its fields (or as ``renamed`` says);
    a field the command does not take keeps its default."""
    values: dict[str, Any] = {}
    for each in fields(cls):  # type: ignore[arg-type]
        name = renamed.get(each.name, each.name)
        if hasattr(args, name):
            value = getattr(args, name)
            values[each.name] = tuple(value) if isinstance(value, list) else value
    return cls(**values)


# --------------------------------------------------------------------------- groups


@dataclass(frozen=True, kw_only=True)
class JudgeOptions:
    """Where the judges are: ``--config``, else ``--base-url`` and ``--model``, else the
    environment (``OPENAI_API_KEY``); ``--embedding-model``: remote embeddings."""

    config: Path | None = None
    base_url: str | None = None
    model: str | None = None
    embedding_model: str | None = None


@dataclass(frozen=True, kw_only=True)
class LimitOptions:
    """How many requests at once, and what a run may spend before it stops.

    Attributes:
        max_concurrency: model requests in flight (``--max-concurrency``).
        max_cost: USD (``--max-cost``); None: no budget.
        max_requests: requests (``--max-requests``); None: no limit.
        max_consecutive_failures: the circuit breaker's (None: the config's, else 20).
        preflight: check each judge with one request before a large run.
    """

    max_concurrency: int = DEFAULT_MAX_CONCURRENCY
    max_cost: float | None = None
    max_requests: int | None = None
    max_consecutive_failures: int | None = None
    preflight: bool = True


@dataclass(frozen=True, kw_only=True)
class BatchOptions:
    """``--batch`` and its options (docs/batch.md)."""

    batch: bool = False
    batch_poll: float = 30.0
    batch_wait: float | None = None
    batch_min_requests: int = DEFAULT_BATCH_MIN_REQUESTS
    batch_cancel: bool = False
    batch_keep_files: bool = False
    batch_embeddings: bool = True


@dataclass(frozen=True, kw_only=True)
class OutputOptions:
    """What a scoring run writes, prints and exits with."""

    out: Path | None = None
    report: Path | None = None
    summary_json: Path | None = None
    fail_under: PerMetric = ()
    quiet: bool = False
    allow_errors: bool = False
    keep_degraded: bool = False


@dataclass(frozen=True, kw_only=True)
class MetricChoice:
    """Which metrics, their pass marks and settings.

    Attributes:
        metric: the ``--metric`` values as given (repeatable, comma-separated).
        threshold: ``--threshold`` values.
        settings: each metric setting given (``criterion``, ``strictness`` ...); one left
            out keeps the registry's default when the metric is built.
        metric_file: ``--metric-file`` files (metrics that ``align`` saved).
    """

    metric: tuple[str, ...] = ()
    threshold: PerMetric = ()
    settings: Mapping[str, Any] = field(default_factory=dict)
    metric_file: tuple[Path, ...] = ()

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> MetricChoice:
        """The choice in ``args``: the settings are those of the registry given there."""
        given = {s.name: getattr(args, s.name) for s in metric_settings() if hasattr(args, s.name)}
        return replace(_read(cls, args), settings=given)


@dataclass(frozen=True, kw_only=True)
class Columns:
    """``--format`` and where the data file holds each field (``--response-col`` ...)."""

    format: Format | None = None
    user_input: str | None = None
    response: str | None = None
    reference: str | None = None
    retrieved_contexts: str | None = None
    id: str | None = None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Columns:
        return _read(cls, args, **{name: f"{name}_column" for name in COLUMN_FLAGS})

    def mapping(self) -> ColumnMapping:
        """The reader's column mapping (the id column defaults to ``id``)."""
        from langchain_answer_metrics.cli.datasets import (
            ColumnMapping,
        )  # the reader: not for --help

        return ColumnMapping(
            user_input=self.user_input,
            response=self.response,
            reference=self.reference,
            retrieved_contexts=self.retrieved_contexts,
            id=self.id or "id",
        )


# --------------------------------------------------------------------------- commands


@dataclass(frozen=True, kw_only=True)
class ScoringOptions:
    """What every command that scores a data file takes (``evaluate``, ``demo``,
    ``calibrate``)."""

    data: Path | None = None
    columns: Columns = field(default_factory=Columns)
    metrics: MetricChoice = field(default_factory=MetricChoice)
    judges: JudgeOptions = field(default_factory=JudgeOptions)
    limits: LimitOptions = field(default_factory=LimitOptions)
    output: OutputOptions = field(default_factory=OutputOptions)

    @staticmethod
    def _groups(args: argparse.Namespace) -> dict[str, Any]:
        return {
            "data": getattr(args, "data", None),
            "columns": Columns.from_args(args),
            "metrics": MetricChoice.from_args(args),
            "judges": _read(JudgeOptions, args),
            "limits": _limits(args),
            "output": _read(OutputOptions, args),
        }


def _limits(args: argparse.Namespace) -> LimitOptions:
    limits = _read(LimitOptions, args)
    return replace(limits, preflight=not getattr(args, "no_preflight", False))


@dataclass(frozen=True, kw_only=True)
class EvaluateOptions(ScoringOptions):
    """``evaluate`` and ``demo``: score a file (``demo``: the bundled one).

    Attributes:
        estimate: send no request, print what the run would send and cost.
        estimate_json: with ``estimate``, also write it as JSON (``--json``).
        compare: ``demo --compare``: also score a variant and compare the two runs.
        demo: the ``demo`` command (prints every sample).
    """

    batch: BatchOptions = field(default_factory=BatchOptions)
    estimate: bool = False
    estimate_json: Path | None = None
    compare: bool = False
    demo: bool = False

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> EvaluateOptions:
        return cls(
            **cls._groups(args),
            batch=_read(BatchOptions, args),
            estimate=args.estimate,
            estimate_json=args.estimate_json,
            compare=getattr(args, "compare", False),
            demo=args.command == "demo",
        )


@dataclass(frozen=True, kw_only=True)
class CalibrateOptions(ScoringOptions):
    """``calibrate``: score the labelled rows, then set the scores against the labels."""

    label_col: str = "label"
    json: Path | None = None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> CalibrateOptions:
        return cls(**cls._groups(args), label_col=args.label_col, json=args.json)


@dataclass(frozen=True, kw_only=True)
class CompareOptions:
    """``compare``: two ``--out`` files, and (``--judge pairwise``) their responses judged."""

    baseline: Path
    candidate: Path
    fail_on_regression: tuple[tuple[str, float], ...] = ()
    report: Path | None = None
    json: Path | None = None
    judge: str | None = None
    criterion: str | None = None
    judges: JudgeOptions = field(default_factory=JudgeOptions)
    limits: LimitOptions = field(default_factory=LimitOptions)
    estimate: bool = False
    quiet: bool = False

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> CompareOptions:
        return replace(_read(cls, args), judges=_read(JudgeOptions, args), limits=_limits(args))


@dataclass(frozen=True, kw_only=True)
class AlignOptions:
    """``align``: fit a metric's judges to human labels (see ``answer-metrics align -h``)."""

    data: Path
    out: Path
    columns: Columns = field(default_factory=Columns)
    metrics: MetricChoice = field(default_factory=MetricChoice)
    judges: JudgeOptions = field(default_factory=JudgeOptions)
    limits: LimitOptions = field(default_factory=LimitOptions)
    label_col: str = "human"
    explanation_col: str | None = None
    folds: int = 5
    holdout: float | None = None
    holdout_col: str | None = None
    examples_per_step: int = 4
    select: Literal["disagreements", "similar"] = "disagreements"
    weights: bool = True
    fit_threshold: bool = True
    seed: int = 0
    report: Path | None = None
    json: Path | None = None
    quiet: bool = False

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> AlignOptions:
        return replace(
            _read(cls, args),
            columns=Columns.from_args(args),
            metrics=MetricChoice.from_args(args),
            judges=_read(JudgeOptions, args),
            limits=_limits(args),
            weights=not args.no_weights,
            fit_threshold=not args.no_threshold,
        )


@dataclass(frozen=True, kw_only=True)
class SimulateOptions:
    """``simulate``: conversations with an app, a simulated user on the other side."""

    scenarios: Path
    app: str
    out: Path | None = None
    cache: Path | None = None
    max_turns: int = 6
    seed: int = 0
    stop_phrase: tuple[str, ...] = ()
    estimate: bool = False
    judges: JudgeOptions = field(default_factory=JudgeOptions)

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> SimulateOptions:
        return replace(_read(cls, args), judges=_read(JudgeOptions, args))


@dataclass(frozen=True, kw_only=True)
class ToyJudgeOptions:
    """``toy-judge``: the port on 127.0.0.1 (0 picks a free one)."""

    port: int = 8011

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> ToyJudgeOptions:
        return _read(cls, args)


CommandOptions = (
    EvaluateOptions
    | CalibrateOptions
    | CompareOptions
    | AlignOptions
    | SimulateOptions
    | ToyJudgeOptions
)

_BY_COMMAND: Mapping[str, Any] = {
    "evaluate": EvaluateOptions,
    "demo": EvaluateOptions,
    "calibrate": CalibrateOptions,
    "compare": CompareOptions,
    "align": AlignOptions,
    "simulate": SimulateOptions,
    "toy-judge": ToyJudgeOptions,
}


def options_of(args: argparse.Namespace) -> CommandOptions:
    """The typed options of the command ``args`` were parsed for: the one reading of the
    parsed arguments."""
    options: CommandOptions = _BY_COMMAND[args.command].from_args(args)
    return options
