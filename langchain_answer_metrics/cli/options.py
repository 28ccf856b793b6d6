"""The ``answer-metrics`` options read beyond the argument parser.

- Each metric's settings, as :data:`~langchain_answer_metrics.metrics.registry.METRICS`
  declares them: one flag per setting (``aspect_name`` is ``--aspect-name``), read back
  per metric by :func:`settings_of`.
- The column flags, which say where each sample field is in the data file
  (read into :class:`~langchain_answer_metrics.cli.command_options.Columns`); the dataset
  loader names them in its messages (:data:`LOADER_FLAGS`).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from typing import Any

from langchain_answer_metrics.cli.formats import FORMATS
from langchain_answer_metrics.metrics.registry import (
    NOT_GIVEN,
    MetricEntry,
    MetricSetting,
    metric_settings,
)


class UsageError(Exception):
    """Bad arguments or an unusable setup; the message says what to fix (exit code 2)."""


def flag(setting: MetricSetting) -> str:
    """The flag of a metric setting: ``--aspect-name`` for ``aspect_name``."""
    return "--" + setting.name.replace("_", "-")


def argument_type(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """``parse`` for argparse: its ValueError becomes the one-line message for the flag."""

    def convert(text: str) -> Any:
        try:
            return parse(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    convert.__name__ = parse.__name__
    return convert


def add_metric_settings(group: argparse._ArgumentGroup) -> None:
    """A flag for each metric setting; one given nowhere keeps its default (or is absent)."""
    for setting in metric_settings():
        # argparse parses a text default when the parser is built: left out here, the
        # registry applies it when the metric is built (--help reads no setting's parser).
        absent = setting.default is NOT_GIVEN or isinstance(setting.default, str)
        group.add_argument(
            flag(setting),
            dest=setting.name,
            type=argument_type(setting.parse),
            default=argparse.SUPPRESS if absent else setting.default,
            metavar=setting.metavar,
            help=setting.help,
        )


def settings_of(given: Mapping[str, Any], entry: MetricEntry) -> dict[str, Any]:
    """The settings of ``entry`` among those ``given`` (one not given is left out)."""
    return {
        setting.name: given[setting.name] for setting in entry.settings if setting.name in given
    }


def missing_setting(entry: MetricEntry, given: Mapping[str, Any]) -> str | None:
    """Why ``entry`` cannot be built from the settings ``given``: the first it lacks, else None."""
    missing = entry.missing_settings(settings_of(given, entry))
    if not missing:
        return None
    return f"{entry.key} {(missing[0].when_missing or '').format(option=flag(missing[0]))}"


# --------------------------------------------------------------------------- columns

COLUMN_FLAGS: dict[str, tuple[str, str]] = {
    "user_input": (
        "--user-input-col",
        "column with the question (default: user_input/question/...)",
    ),
    "response": (
        "--response-col",
        "column with the answer to score (default: response/answer/...)",
    ),
    "reference": (
        "--reference-col",
        "column with the reference (default: reference/ground_truth/...)",
    ),
    "retrieved_contexts": (
        "--contexts-col",
        "column with the contexts; in CSV a JSON list or one text",
    ),
    "id": ("--id-col", "column with the sample id (default: id, else the row number)"),
}
"""Per ColumnMapping field: its flag and help."""

FORMAT_FLAG = "--format"

LOADER_FLAGS: dict[str, str] = {
    "format": FORMAT_FLAG,
    **{name: column_flag for name, (column_flag, _) in COLUMN_FLAGS.items()},
}
"""What the dataset loader's messages tell the user to pass."""


def add_column_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(FORMAT_FLAG, choices=FORMATS, help="override the format from the suffix")
    columns = parser.add_argument_group("column mapping (each flag overrides the default names)")
    for name, (column_flag, help_text) in COLUMN_FLAGS.items():
        columns.add_argument(column_flag, dest=f"{name}_column", metavar="NAME", help=help_text)
