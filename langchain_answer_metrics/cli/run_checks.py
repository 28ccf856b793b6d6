"""What a run checks before it builds a model: the metrics chosen, the pass marks, the
output folders and every row of the data.

Apart from the run itself, and light: a one-line error about an option or the data
comes without loading LangChain, the metrics or the models.
"""

from __future__ import annotations

import collections
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_answer_metrics.cli.command_options import ScoringOptions
from langchain_answer_metrics.cli.group_options import JudgeOptions, MetricChoice
from langchain_answer_metrics.cli.interrupts import CTRL_C
from langchain_answer_metrics.cli.options import (
    LOADER_FLAGS,
    UsageError,
    missing_setting,
    settings_of,
)
from langchain_answer_metrics.core.strict_options import closest_name
from langchain_answer_metrics.metrics.registry import METRICS, MetricEntry

if TYPE_CHECKING:
    from langchain_answer_metrics.cli.datasets import DatasetRow

NO_JUDGE = (
    "{metrics} need(s) a judge model and none is configured: set OPENAI_API_KEY, or pass "
    "--config models.yaml, or --base-url URL --model NAME for any OpenAI-compatible endpoint "
    "(a local Ollama: --base-url http://localhost:11434/v1 --model qwen2.5:7b; vLLM works too)"
)


@dataclass(frozen=True)
class CheckedRun:
    """The options and data of a run, checked.

    Attributes:
        names: the metrics chosen (``--metric``, else the command's default).
        keys: their result keys (an AspectCritic is keyed by its name).
        thresholds: the pass mark per result key given by ``--threshold``.
        gates: the ``--fail-under`` value per result key.
        rows: the dataset's rows, read again from the file at each call (kept nowhere).
    """

    names: list[str]
    keys: list[str]
    thresholds: dict[str, float]
    gates: dict[str, float]
    rows: Callable[[], Iterator[DatasetRow]]


def metric_entries(choice: MetricChoice, judges: JudgeOptions) -> Mapping[str, MetricEntry]:
    """The registry's metrics, with the judges ``--config`` declares and the metrics
    ``--metric-file`` names (read only when given)."""
    if judges.config is None and not choice.metric_file:
        return METRICS
    from langchain_answer_metrics.cli.declared import metric_entries as with_declared

    return with_declared(judges.config, choice.metric_file)


def metric_values(choice: MetricChoice) -> list[str]:
    """``--metric`` as given, with the keys of the ``--metric-file`` files after it."""
    if not choice.metric_file:
        return list(choice.metric)
    from langchain_answer_metrics.cli.aligned_files import with_metric_files

    return with_metric_files(choice.metric, choice.metric_file)


def check_run(options: ScoringOptions, data: Path, default_metrics: Sequence[str]) -> CheckedRun:
    """Check the options and every row of ``data`` before any model is built.

    Raises:
        UsageError: an unknown metric, a pass mark for a metric not chosen, an output in a
            folder that does not exist.
        DatasetError: a row the chosen metrics cannot read (the file, line and field named).
    """
    choice, output = options.metrics, options.output
    entries = metric_entries(choice, options.judges)  # the registry's and the config's judges
    names = chosen_metrics(metric_values(choice), default_metrics, entries)
    keys = result_keys(names, entries, choice.settings, config=options.judges.config)
    thresholds = per_metric_values(choice.threshold, keys, "--threshold")
    gates = per_metric_values(output.fail_under, keys, "--fail-under")
    check_writable(output.out, "--out")
    check_writable(output.report, "--report")
    check_writable(output.summary_json, "--summary-json")
    required = [field for name in names for field in entries[name].required_fields]
    columns = options.columns

    def rows() -> Iterator[DatasetRow]:
        from langchain_answer_metrics.cli.datasets import iter_rows

        return iter_rows(
            data, columns.mapping(), format=columns.format, required=required, flags=LOADER_FLAGS
        )

    # Every row checked before any model is built; Ctrl-C stops it between two rows.
    collections.deque(CTRL_C.between(rows()), maxlen=0)
    _check_models_given(options.judges, choice.settings, [entries[name] for name in names])
    return CheckedRun(names, keys, thresholds, gates, rows)


def _check_models_given(
    judges: JudgeOptions, settings: Mapping[str, Any], entries: Sequence[MetricEntry]
) -> None:
    """A setting a metric cannot do without, or a judge where none is configured: said
    here, before the models are built (building them names the rest)."""
    for entry in entries:
        problem = missing_setting(entry, settings, config=judges.config)
        if problem is not None:
            raise UsageError(problem)
    judged = [entry.key for entry in entries if entry.needs_judge]
    configured = judges.config or judges.base_url
    if judged and not configured and not os.environ.get("OPENAI_API_KEY"):
        raise UsageError(NO_JUDGE.format(metrics=", ".join(judged)))


def chosen_metrics(
    values: Sequence[str], default: Sequence[str], entries: Mapping[str, MetricEntry] = METRICS
) -> list[str]:
    """The metric names of ``--metric`` (repeatable, comma-separated), else ``default``;
    ``entries``: the run's metrics (:func:`~.declared.metric_entries`: the config's judges too).
    """
    # factual-correctness and Factual_Correctness name factual_correctness.
    names = [
        name.strip().lower().replace("-", "_")
        for value in values
        for name in value.split(",")
        if name.strip()
    ]
    unknown = [name for name in names if name not in entries]
    if unknown:
        guess = closest_name(unknown[0], list(entries))
        hint = f" (did you mean {guess}?)" if guess else ""
        # (the --metric help says where judges of your own are declared)
        raise UsageError(f"unknown metric {unknown[0]!r}{hint}; choose from {', '.join(entries)}")
    names = list(dict.fromkeys(names)) or list(default)
    if not names:
        raise UsageError(f"choose at least one --metric: {', '.join(entries)}")
    return names


def result_keys(
    names: Sequence[str],
    entries: Mapping[str, MetricEntry],
    settings: Mapping[str, Any],
    *,
    config: Path | None = None,
) -> list[str]:
    """The key each metric's results will have (an AspectCritic is keyed by its name),
    with the settings given as flags over ``config``'s."""
    return [
        entries[name].result_key(settings_of(settings, entries[name], config=config))
        for name in names
    ]


def per_metric_values(
    values: Sequence[tuple[str | None, float]], keys: Sequence[str], flag: str
) -> dict[str, float]:
    """``--threshold 0.7 --threshold faithfulness=0.8`` -> a value per metric key.

    A value for one metric wins over a value for all; among equals, the last one wins.
    """
    result: dict[str, float] = {}
    for name, value in values:
        if name is None:
            result.update(dict.fromkeys(keys, value))
        elif name not in keys:
            raise UsageError(
                f"{flag} {name}={value}: {name!r} is not a chosen metric ({', '.join(keys)})"
            )
    result.update({name: value for name, value in values if name is not None})
    return result


def check_writable(path: Path | None, flag: str) -> None:
    """Refuse an output in a folder that does not exist, before any work."""
    if path is not None and not path.expanduser().resolve().parent.is_dir():
        raise UsageError(f"{flag} {path}: the folder {path.parent} does not exist; create it")
