"""A metric's settings as a user gives them by name, as text (the CLI's ``--strictness 3``,
a config's ``metrics:`` entry), and the parsers that read them.

    >>> positive_int("3"), unit_interval("0.5")
    (3, 0.5)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langchain_answer_metrics.judging.trajectory_text import MAX_CHARS, TOOL_RESULT_CHARS
from langchain_answer_metrics.metrics.aspects import ASPECTS


def unit_interval(text: str) -> float:
    """A number from 0 to 1; ValueError says what is wrong with ``text``."""
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{text} must be between 0 and 1")
    return value


def positive_int(text: str) -> int:
    """A whole number of at least 1; ValueError says what is wrong with ``text``."""
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise ValueError(f"{text} must be at least 1")
    return value


def at_least(low: int) -> Callable[[str], int]:
    """A parser of whole numbers of at least ``low``; its errors say what is wrong."""

    def parse(text: str) -> int:
        value = positive_int(text)
        if value < low:
            raise ValueError(f"{text} must be at least {low}")
        return value

    parse.__name__ = positive_int.__name__
    return parse


def _strictness(text: str) -> int:
    value = positive_int(text)
    if value > 5:
        raise ValueError(f"{text} must be between 1 and 5")
    return value


def _baseline(text: str) -> float | None:
    if text.lower() == "none":
        return None
    value = unit_interval(text)
    if value >= 1.0:
        raise ValueError("the baseline must be below 1")
    return value


NOT_GIVEN: Any = object()
"""The default of a setting that is absent unless the user gives it (its absence means
something of its own, such as "the embedding model's baseline")."""


@dataclass(frozen=True)
class MetricSetting:
    """A setting a user may give a metric by name, as text (the CLI's ``--strictness 3``).

    ``parse`` turns the text into the value, raising ValueError with a message for the
    user. ``when_missing``, for a setting the metric cannot do without, says what is
    needed; ``{option}`` in it stands for however the face names the setting.
    """

    name: str
    help: str
    metavar: str
    parse: Callable[[str], Any] = str
    default: Any = None
    when_missing: str | None = None
    instead: str | None = None
    """The setting that, given, makes this one needless (``aspect`` for ``criterion``)."""
    short: str | None = None
    """Its name in the metric's own entry of a config file, where the metric is already
    named (``mode`` under ``trajectory_match:`` for ``trajectory_mode``); the full name is
    accepted there too."""

    def lacks(self, value: Any) -> bool:
        """Whether ``value`` leaves out a setting the metric cannot do without."""
        return self.when_missing is not None and not (value or "").strip()


RESCALE_BASELINE = MetricSetting(
    "rescale_baseline",
    help="semantic similarity baseline b in max(0, (cos - b) / (1 - b)); defaults to the "
    "local model's measured baseline, none for other embedding models",
    metavar="B|none",
    parse=_baseline,
    default=NOT_GIVEN,
)
CRITERION = MetricSetting(
    "criterion",
    help="aspect_critic's criterion, in your own words",
    metavar="TEXT",
    when_missing='needs {option} TEXT (e.g. {option} "The answer cites a year"), or a '
    f"built-in aspect: --aspect {'|'.join(ASPECTS)}",
    instead="aspect",
)


def _aspect(text: str) -> str:
    if text not in ASPECTS:
        raise ValueError(f"{text!r} is not a built-in aspect; choose from {', '.join(ASPECTS)}")
    return text


ASPECT = MetricSetting(
    "aspect",
    help=f"aspect_critic's built-in aspect instead of a criterion: {', '.join(ASPECTS)}",
    metavar="NAME",
    parse=_aspect,
)
ASPECT_NAME = MetricSetting("aspect_name", help="aspect_critic's result key", metavar="NAME")
STRICTNESS = MetricSetting(
    "strictness",
    help="votes per judge of aspect_critic, agent_goal_accuracy and trajectory_judge (1-5; "
    "use a temperature above 0)",
    metavar="N",
    parse=_strictness,
    default=1,
)


# The agent judges' settings (their metrics import them from here).
TOOL_RESULT_CHARS_SETTING = MetricSetting(
    "tool_result_chars",
    help="agent_goal_accuracy and trajectory_judge: the most characters of one tool result "
    "the judge sees (the rest is cut, and the cut is in the details)",
    metavar="N",
    parse=at_least(50),
    default=TOOL_RESULT_CHARS,
)
MAX_TRAJECTORY_CHARS_SETTING = MetricSetting(
    "max_trajectory_chars",
    help="agent_goal_accuracy and trajectory_judge: the most characters of a trajectory the "
    "judge sees (beyond it the middle steps are left out, counted per tool)",
    metavar="N",
    parse=at_least(2000),
    default=MAX_CHARS,
)


def _trajectory_output(text: str) -> str:
    if text not in ("pass_fail", "scale"):
        raise ValueError(f"{text!r} is not pass_fail or scale")
    return text


TRAJECTORY_OUTPUT_SETTING = MetricSetting(
    "trajectory_output",
    help="trajectory_judge's verdict: pass_fail, or scale (levels 1 to 5)",
    metavar="pass_fail|scale",
    parse=_trajectory_output,
    default="pass_fail",
    short="output",
)
