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
from pathlib import Path
from typing import Any

from langchain_answer_metrics.cli.formats import FORMATS
from langchain_answer_metrics.metrics.registry import (
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
    """A flag for each metric setting; one not given is absent from the options."""
    for setting in metric_settings():
        # Absent unless given: a flag given explicitly wins over the --config file's
        # setting, and the registry applies the default when neither gives one.
        group.add_argument(
            flag(setting),
            dest=setting.name,
            type=argument_type(setting.parse),
            default=argparse.SUPPRESS,
            metavar=setting.metavar,
            help=setting.help,
        )


def settings_of(
    given: Mapping[str, Any], entry: MetricEntry, *, config: Path | None = None
) -> dict[str, Any]:
    """The settings of ``entry``: those ``given`` as flags, over the ``config`` file's
    (:func:`~langchain_answer_metrics.cli.configured.configured_settings`); one given
    nowhere is left out (the registry applies its default)."""
    flags = {
        setting.name: given[setting.name] for setting in entry.settings if setting.name in given
    }
    if config is None or not entry.settings:
        return flags
    # Imported here: a run without --config reads no config file (nor its modules).
    from langchain_answer_metrics.cli.configured import configured_settings

    return {**configured_settings(config).get(entry.key, {}), **flags}  # a flag wins


def missing_setting(
    entry: MetricEntry, given: Mapping[str, Any], *, config: Path | None = None
) -> str | None:
    """Why ``entry`` cannot be built from the settings ``given`` (and ``config``'s): the
    first it lacks, else None."""
    missing = entry.missing_settings(settings_of(given, entry, config=config))
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
