"""The typed options of each command, built once from the parsed arguments.

One frozen, keyword-only dataclass per command, made of the option groups it takes
(:mod:`~langchain_answer_metrics.cli.group_options`) and its own options.
:func:`options_of` is the one reading of an ``argparse.Namespace`` into them: the
command's entry point (:func:`~langchain_answer_metrics.cli.command.main`) calls it, and
everything below takes the typed object, or plain values from it. Light: it is built
before the run's machinery is loaded.

    >>> from langchain_answer_metrics.cli.parser import build_parser
    >>> args = build_parser().parse_args(["evaluate", "qa.jsonl", "--max-cost", "2"])
    >>> options = options_of(args)
    >>> options.limits.max_cost, options.limits.max_concurrency
    (2.0, 16)
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from langchain_answer_metrics.cli.group_options import (
    BatchOptions,
    Columns,
    JudgeOptions,
    LimitOptions,
    MetricChoice,
    OutputOptions,
    read_fields,
)

__all__ = [
    "AlignOptions",
    "CalibrateOptions",
    "CommandOptions",
    "CompareOptions",
    "EvaluateOptions",
    "ScoringOptions",
    "SimulateOptions",
    "ToyJudgeOptions",
    "options_of",
]


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
            "judges": JudgeOptions.from_args(args),
            "limits": LimitOptions.from_args(args),
            "output": OutputOptions.from_args(args),
        }


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
            batch=BatchOptions.from_args(args),
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
        return replace(
            read_fields(cls, args),
            judges=JudgeOptions.from_args(args),
            limits=LimitOptions.from_args(args),
        )


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
    scores: Path | None = None
    report: Path | None = None
    json: Path | None = None
    quiet: bool = False

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> AlignOptions:
        return replace(
            read_fields(cls, args),
            columns=Columns.from_args(args),
            metrics=MetricChoice.from_args(args),
            judges=JudgeOptions.from_args(args),
            limits=LimitOptions.from_args(args),
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
        return replace(read_fields(cls, args), judges=JudgeOptions.from_args(args))


@dataclass(frozen=True, kw_only=True)
class ToyJudgeOptions:
    """``toy-judge``: the port on 127.0.0.1 (0 picks a free one)."""

    port: int = 8011

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> ToyJudgeOptions:
        return read_fields(cls, args)


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
