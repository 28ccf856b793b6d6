"""The built-in metrics' settings a ``--config`` file gives under ``metrics:``.

    metrics:
      trajectory_match: {mode: unordered, tool_args: subset}
      tool_call_f1: {tool_args: ignore}
      knowledge_retention: {window: 4}

The config layer keeps these entries as written (it knows nothing of the metrics); here
each one is checked against the registry's declaration of that metric's settings
(:class:`~langchain_answer_metrics.metrics.settings.MetricSetting`) and read with the
same parser as its flag, so ``mode: sideways`` fails as ``--trajectory-mode sideways``
would. Every problem is reported at once, each at its key path and YAML line with a
"did you mean", before any model is built or request sent.

A flag given on the command line wins over the file: ``--tool-args exact`` overrides
``tool_args: subset`` for every metric that takes it
(:func:`~langchain_answer_metrics.cli.options.settings_of`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from langchain_answer_metrics.config.declared import declaration_error, given_settings
from langchain_answer_metrics.core.strict_options import closest_name
from langchain_answer_metrics.metrics.registry import METRICS, MetricEntry, MetricSetting

__all__ = ["configured_settings"]


def configured_settings(
    config: Path | None, entries: Mapping[str, MetricEntry] = METRICS
) -> dict[str, dict[str, Any]]:
    """The settings ``config`` gives the metrics of ``entries``, checked and read: by
    metric key, each setting by its registry name (``trajectory_mode``, not ``mode``).

    Raises:
        ConfigError: every unknown metric, unknown setting or bad value, each at its key
            path and YAML line.

    Example:
        >>> configured_settings(Path("agents.yaml"))
        {'trajectory_match': {'trajectory_mode': 'unordered', 'tool_args': 'subset'}}
    """
    if config is None:
        return {}
    found: dict[str, dict[str, Any]] = {}
    problems: list[tuple[str, str]] = []
    for name, given in given_settings(config).items():
        entry = entries.get(name)
        if entry is None:
            guess = closest_name(name, list(entries))
            hint = f" (did you mean {guess}?)" if guess else ""
            problems.append(
                (
                    f"metrics.{name}",
                    f"no built-in metric is named {name!r}{hint}; a judge of your own needs "
                    "a criterion: or a prompt:",
                )
            )
            continue
        found[name] = _read(entry, given, problems)
    if problems:
        raise declaration_error(config, problems)
    return found


def _read(
    entry: MetricEntry, given: Mapping[str, Any], problems: list[tuple[str, str]]
) -> dict[str, Any]:
    """``given``'s settings of ``entry``, read; what is wrong goes to ``problems``."""
    read: dict[str, Any] = {}
    named: dict[str, str] = {}  # registry name -> the key the file used
    for key, value in given.items():
        path = f"metrics.{entry.key}.{key}"
        setting = entry.setting_named(str(key))
        if setting is None:
            problems.append((path, _unknown(entry, str(key))))
            continue
        if setting.name in named:
            problems.append(
                (path, f"{named[setting.name]} and {key} are one setting: give it once")
            )
            continue
        named[setting.name] = str(key)
        try:
            read[setting.name] = setting.parse(_as_text(value))
        except ValueError as error:
            problems.append((path, str(error)))
    return read


def _unknown(entry: MetricEntry, key: str) -> str:
    if not entry.settings:
        return f"{entry.key} takes no settings"
    offered = [_config_name(item) for item in entry.settings]
    known = offered + [item.name for item in entry.settings]
    guess = closest_name(key, known)
    if guess is not None:
        guess = _config_name(next(s for s in entry.settings if guess in (s.name, s.short)))
    hint = f" (did you mean {guess}?)" if guess else ""
    return f"{entry.key} has no setting {key!r}{hint}; its settings: {', '.join(offered)}"


def _config_name(setting: MetricSetting) -> str:
    return setting.short or setting.name


def _as_text(value: Any) -> str:
    """A YAML value as its flag's text: a list joined with ``;`` (topics), a mapping of
    tool -> argument names as ``tool=a,b;tool2=c`` (tool_args_overrides), ``null`` as
    ``none``."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        return ";".join(_as_text(item) for item in value)
    if isinstance(value, dict):
        return ";".join(
            f"{tool}={','.join(map(str, names)) if isinstance(names, list) else names}"
            for tool, names in value.items()
        )
    return str(value)
