"""A metric's settings as a user gives them by name, as text (the CLI's ``--strictness 3``,
a config's ``metrics:`` entry), and the parsers that read them.

    >>> positive_int("3"), unit_interval("0.5")
    (3, 0.5)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


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

    def lacks(self, value: Any) -> bool:
        """Whether ``value`` leaves out a setting the metric cannot do without."""
        return self.when_missing is not None and not (value or "").strip()
