"""The settings of the tool-call metrics as a user gives them by name (the CLI's
``--trajectory-mode unordered``, ``--tool-args superset``, ``--tool-args-overrides
"search=query;book=city,date"``), with how each is read from text.

    >>> tool_args_overrides("search=query;book=city,date")
    {'search': ['query'], 'book': ['city', 'date']}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_answer_metrics.agents.matching import ArgsMode
    from langchain_answer_metrics.metrics.trajectory_match import TrajectoryMode

# The modes are imported when a setting is read: the registry (and --help) reads this
# module without loading the metrics.


def trajectory_mode(text: str) -> TrajectoryMode:
    """One of strict, unordered, superset, subset; ValueError otherwise."""
    from langchain_answer_metrics.metrics.trajectory_match import TRAJECTORY_MODES

    for mode in TRAJECTORY_MODES:
        if text == mode:
            return mode
    raise ValueError(
        f"{text!r} is not a trajectory mode; choose from {', '.join(TRAJECTORY_MODES)}"
    )


def args_mode(text: str) -> ArgsMode:
    """One of exact, ignore, superset, subset; ValueError otherwise."""
    from langchain_answer_metrics.agents.matching import ARGS_MODES

    for mode in ARGS_MODES:
        if text == mode:
            return mode
    raise ValueError(f"{text!r} is not an argument mode; choose from {', '.join(ARGS_MODES)}")


def tool_args_overrides(text: str) -> dict[str, list[str]]:
    """``tool=arg,arg;tool=arg``: per tool, the only arguments compared."""
    overrides: dict[str, list[str]] = {}
    for part in filter(None, (piece.strip() for piece in text.split(";"))):
        tool, equals, names = part.partition("=")
        arguments = [name.strip() for name in names.split(",") if name.strip()]
        if not equals or not tool.strip():
            raise ValueError(f"{part!r} is not TOOL=ARG[,ARG...] (e.g. search=query)")
        overrides[tool.strip()] = arguments
    return overrides


# The registry's MetricSetting arguments (the registry builds them: it imports this module).
TRAJECTORY_MODE: dict[str, Any] = dict(
    name="trajectory_mode",
    help="trajectory_match's mode: strict (same calls, same order), unordered, superset "
    "(every expected call made) or subset (every call made was expected)",
    metavar="MODE",
    parse=trajectory_mode,
    default="strict",
    short="mode",
)
TOOL_ARGS: dict[str, Any] = dict(
    name="tool_args",
    help="how trajectory_match and tool_call_f1 compare a call's arguments: exact, ignore, "
    "superset (the call has every expected argument) or subset",
    metavar="MODE",
    parse=args_mode,
    default="exact",
)
TOOL_ARGS_OVERRIDES: dict[str, Any] = dict(
    name="tool_args_overrides",
    help="per tool, the only arguments compared: TOOL=ARG[,ARG...][;TOOL=...]",
    metavar="RULES",
    parse=tool_args_overrides,
)


def options(settings: Mapping[str, Any]) -> dict[str, Any]:
    """A tool-call metric's keyword options from its registry settings (those it has)."""
    names = {"trajectory_mode": "mode", "tool_args": "tool_args"}
    found = {names[name]: settings[name] for name in names if name in settings}
    return {**found, "tool_args_overrides": settings.get("tool_args_overrides") or {}}
