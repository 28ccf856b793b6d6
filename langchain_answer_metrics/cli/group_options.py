"""The typed options of each shared option group, read once from the parsed arguments.

One frozen, keyword-only dataclass per group of
:mod:`~langchain_answer_metrics.cli.option_groups` (which declares the flags):
:class:`JudgeOptions`, :class:`LimitOptions`, :class:`BatchOptions`,
:class:`OutputOptions`, :class:`MetricChoice`, :class:`Columns`. Each reads itself from an
``argparse.Namespace`` (``from_args``), called only while
:func:`~langchain_answer_metrics.cli.command_options.options_of` builds a command's
options; below that, everything takes these objects, or plain values from them. Light:
built before the run's machinery is loaded.

    >>> from langchain_answer_metrics.cli.parser import build_parser
    >>> args = build_parser().parse_args(["evaluate", "qa.jsonl", "--max-cost", "2"])
    >>> limits = LimitOptions.from_args(args)
    >>> limits.max_cost, limits.max_concurrency
    (2.0, 16)
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from langchain_answer_metrics.cli.formats import Format
from langchain_answer_metrics.cli.options import COLUMN_FLAGS
from langchain_answer_metrics.judging.batch.rounds import DEFAULT_BATCH_MIN_REQUESTS
from langchain_answer_metrics.judging.limits import DEFAULT_MAX_CONCURRENCY
from langchain_answer_metrics.metrics.registry import metric_settings

if TYPE_CHECKING:
    from langchain_answer_metrics.cli.datasets import ColumnMapping

__all__ = [
    "BatchOptions",
    "Columns",
    "JudgeOptions",
    "LimitOptions",
    "MetricChoice",
    "OutputOptions",
    "PerMetric",
    "read_fields",
]

PerMetric = tuple[tuple[str | None, float], ...]  # (a metric, or None for all; its value)

_Group = TypeVar("_Group")


def read_fields(cls: type[_Group], args: argparse.Namespace, **renamed: str) -> _Group:
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

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> JudgeOptions:
        return read_fields(cls, args)


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

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> LimitOptions:
        """The limits in ``args``; ``--no-preflight`` turns the judges' check off."""
        limits = read_fields(cls, args)
        return replace(limits, preflight=not getattr(args, "no_preflight", False))


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

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> BatchOptions:
        return read_fields(cls, args)


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

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> OutputOptions:
        return read_fields(cls, args)


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
        return replace(read_fields(cls, args), settings=given)


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
        return read_fields(cls, args, **{name: f"{name}_column" for name in COLUMN_FLAGS})

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
