"""One command-line option declared once (:class:`Option`: its flag, its one validator,
default, metavar and help), and the validators of option values, each naming what it
expects. The options several commands take are :mod:`~langchain_answer_metrics.cli.option_groups`'.

    >>> parser = argparse.ArgumentParser()
    >>> Option("--max-cost", "USD at most", type=usd, metavar="USD").add_to(parser)
    >>> parser.parse_args(["--max-cost", "$2.5"]).max_cost
    2.5
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_answer_metrics.cli.options import argument_type
from langchain_answer_metrics.judging.batch.rounds import seconds_of
from langchain_answer_metrics.metrics.registry import unit_interval

__all__ = ["Container", "Option", "add_options", "duration", "per_metric", "seconds", "usd"]

Container = argparse.ArgumentParser | argparse._ArgumentGroup

# --------------------------------------------------------------------------- validators


def usd(text: str) -> float:
    """An amount of USD >= 0: ``2.5`` or ``$2.5``."""
    value = float(text.strip().removeprefix("$"))
    if not value >= 0 or value == float("inf"):
        raise ValueError(f"{text!r} is not an amount of USD >= 0")
    return value


def per_metric(text: str) -> tuple[str | None, float]:
    """``0.7`` (every metric) or ``faithfulness=0.8`` (one metric)."""
    name, sep, value = text.rpartition("=")
    return (name.strip() if sep else None), unit_interval(value.strip())


def seconds(text: str) -> float:
    """A number of seconds > 0."""
    value = float(text)
    if not value > 0:
        raise ValueError(f"{text!r} is not a number of seconds > 0")
    return value


def duration(text: str) -> float:
    """A duration: seconds, or ``90m``, ``2h``."""
    return seconds_of(text)


# --------------------------------------------------------------------------- an option


@dataclass(frozen=True)
class Option:
    """One option, declared once: what ``add_argument`` is given for it.

    Attributes:
        flag: ``--max-cost``.
        help: the help; a command may say it in its own words (``add_to(help=...)``).
        type: the one validator of the value (None: a flag or plain text).
        action: ``store_true``, ``store_false`` or ``append`` (None: one value).
        dest: the attribute of the parsed arguments (None: from the flag).
    """

    flag: str
    help: str
    type: Callable[[str], Any] | None = None
    default: Any = None
    metavar: str | None = None
    action: str | None = None
    dest: str | None = None

    @property
    def name(self) -> str:
        """The attribute the parsed arguments hold it in: ``max_cost``."""
        return self.dest or self.flag.removeprefix("--").replace("-", "_")

    def add_to(self, container: Container, *, help: str | None = None, **extra: Any) -> None:
        """Add the option to a parser or group (``extra``: e.g. ``required=True``)."""
        kwargs: dict[str, Any] = {"dest": self.name, "help": help or self.help}
        if self.action in ("store_true", "store_false"):
            container.add_argument(self.flag, action=self.action, **kwargs, **extra)
            return
        kwargs["metavar"] = self.metavar
        if self.action == "append":
            kwargs.update(action="append", default=[])
        elif self.default is not None:
            kwargs["default"] = self.default
        if self.type is not None:  # argparse names the flag in a builtin's error itself
            builtin = self.type in (int, float, Path)
            kwargs["type"] = self.type if builtin else argument_type(self.type)
        container.add_argument(self.flag, **{**kwargs, **extra})


def add_options(container: Container, *options: Option) -> None:
    """Add ``options``, each as declared."""
    for option in options:
        option.add_to(container)
