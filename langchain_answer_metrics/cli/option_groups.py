"""Every option that more than one command takes, declared once: its flag, its one type
(the validator that reads it, naming the flag in its error), its default, metavar and help;
grouped by concern. The parsers (:mod:`~langchain_answer_metrics.cli.parser`) add the
groups they need, and :mod:`~langchain_answer_metrics.cli.group_options` reads each group
into one typed object.

- judges: ``--config``, ``--base-url``, ``--model``, ``--embedding-model``;
- limits: ``--max-concurrency``, ``--max-cost``, ``--max-requests``,
  ``--max-consecutive-failures``, ``--no-preflight``;
- estimate: ``--estimate``, ``--json``;
- batch: ``--batch``, ``--batch-poll``, ``--batch-wait``, ``--batch-min-requests``,
  ``--batch-cancel``, ``--batch-keep-files``;
- output: ``--out``, ``--report``, ``--summary-json``, ``--fail-under``, ``--quiet``,
  ``--allow-errors``, ``--keep-degraded``;
- metrics: ``--metric``, ``--threshold``, each metric's settings, ``--metric-file``.

Light on purpose: building the parser (``--help``, a bad argument) loads no metric.

    >>> parser = argparse.ArgumentParser()
    >>> add_options(parser, MAX_CONCURRENCY, MAX_COST)
    >>> parser.parse_args(["--max-cost", "$2.5"]).max_cost
    2.5
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_answer_metrics.cli.options import add_metric_settings, argument_type
from langchain_answer_metrics.judging.batch.rounds import DEFAULT_BATCH_MIN_REQUESTS, seconds_of
from langchain_answer_metrics.judging.limits import DEFAULT_MAX_CONCURRENCY
from langchain_answer_metrics.metrics.registry import METRIC_NAMES, positive_int, unit_interval

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


# --------------------------------------------------------------------------- judges

CONFIG = Option("--config", "models YAML file", type=Path, metavar="FILE")
BASE_URL = Option(
    "--base-url",
    "any OpenAI-compatible endpoint (Ollama, vLLM ...); each request's deadline is "
    "ANSWER_METRICS_TIMEOUT seconds (default 120)",
    metavar="URL",
)
MODEL = Option("--model", "judge model id (with --base-url or env)", metavar="ID")
EMBEDDING_MODEL = Option(
    "--embedding-model", "remote embedding model instead of the bundled local one", metavar="ID"
)
JUDGES = (CONFIG, BASE_URL, MODEL, EMBEDDING_MODEL)
"""Where the judges (and embedding models) are: a config file, an endpoint, or the env."""

# --------------------------------------------------------------------------- limits

MAX_CONCURRENCY = Option(
    "--max-concurrency",
    f"model requests in flight (default {DEFAULT_MAX_CONCURRENCY})",
    type=positive_int,
    default=DEFAULT_MAX_CONCURRENCY,
    metavar="N",
)
MAX_COST = Option(
    "--max-cost",
    "stop starting samples once the next would take the spend past USD (needs a price for "
    "every model: built in for common OpenAI models, or `price:` in --config)",
    type=usd,
    metavar="USD",
)
MAX_REQUESTS = Option(
    "--max-requests",
    "stop starting samples once the next would take the requests past N",
    type=positive_int,
    metavar="N",
)
MAX_CONSECUTIVE_FAILURES = Option(
    "--max-consecutive-failures",
    "exclude a judge (stop the run when none is left, or an embedding endpoint fails) when "
    "N of its requests in a row fail with connection errors, timeouts or 5xx, retries "
    "counted (default 20, or the config file's); 3 timeouts in a row too",
    type=positive_int,
    metavar="N",
)
NO_PREFLIGHT = Option(
    "--no-preflight",
    "above 20 samples, each judge is first checked with one short request through its "
    "structured-output method, and a judge that cannot answer is refused (exit 2): skip "
    "that check",
    action="store_true",
)
LIMITS = (MAX_COST, MAX_REQUESTS, MAX_CONSECUTIVE_FAILURES, NO_PREFLIGHT)
"""What a run may spend, and when it stops (``--max-concurrency`` goes with the models)."""

# --------------------------------------------------------------------------- estimate

ESTIMATE = Option(
    "--estimate",
    "send no request: print the expected requests, tokens and cost per model",
    action="store_true",
)
ESTIMATE_JSON = Option(
    "--json",
    "with --estimate: also write the estimate as JSON",
    type=Path,
    metavar="PATH",
    dest="estimate_json",
)
STATISTICS_JSON = Option("--json", "the statistics as JSON", type=Path, metavar="FILE")

# --------------------------------------------------------------------------- batch

BATCH = (
    Option(
        "--batch",
        "send the OpenAI judges' requests through the Batch API: half the price, replies in "
        "minutes to hours; resumable with --out (docs/batch.md)",
        action="store_true",
    ),
    Option(
        "--batch-poll",
        "seconds between polls of the batches (default 30)",
        type=seconds,
        default=30.0,
        metavar="SECONDS",
    ),
    Option(
        "--batch-wait",
        "wait at most this long (e.g. 90m, 2h); then exit 6, resumable",
        type=duration,
        metavar="DURATION",
    ),
    Option(
        "--batch-min-requests",
        f"run live when fewer judge requests are expected (default "
        f"{DEFAULT_BATCH_MIN_REQUESTS}; 0: always batch)",
        type=int,
        default=DEFAULT_BATCH_MIN_REQUESTS,
        metavar="N",
    ),
    Option(
        "--batch-cancel",
        "cancel the batches of this --out at the provider, then exit",
        action="store_true",
    ),
    Option(
        "--batch-keep-files",
        "keep the uploaded input files at the provider (default: deleted once done)",
        action="store_true",
    ),
    Option(
        "--no-batch-embeddings",
        "send the embedding requests live, at the live price (default: through the Batch "
        "API too, where the endpoint takes embeddings batches)",
        action="store_false",
        dest="batch_embeddings",
    ),
)
"""Batch mode (docs/batch.md; what the run does with them: cli/batch.py)."""

# --------------------------------------------------------------------------- output

OUT = Option("--out", "per-sample JSONL; resumes", type=Path, metavar="FILE")
REPORT = Option("--report", "self-contained HTML report", type=Path, metavar="FILE")
SUMMARY_JSON = Option(
    "--summary-json",
    "the run's summary as JSON for CI: means, CIs, pass rates, errors, usage",
    type=Path,
    metavar="PATH",
)
FAIL_UNDER = Option(
    "--fail-under",
    "exit 1 when a metric's mean is below X (repeatable, e.g. faithfulness=0.8)",
    type=per_metric,
    metavar="[METRIC=]X",
    action="append",
)
QUIET = Option("--quiet", "no progress bar and no spend block", action="store_true")
ALLOW_ERRORS = Option(
    "--allow-errors", "exit 0, not 3, when some samples have metric errors", action="store_true"
)
KEEP_DEGRADED = Option(
    "--keep-degraded",
    "on resume, keep scores made without a judge that failed (default: redo them)",
    action="store_true",
)
OUTPUT = (OUT, REPORT, SUMMARY_JSON, FAIL_UNDER, QUIET, ALLOW_ERRORS, KEEP_DEGRADED)
"""What a scoring run writes and how it exits."""

# --------------------------------------------------------------------------- metrics

METRIC = Option(
    "--metric",
    "repeatable or comma-separated: a judge declared under metrics: in --config, or a "
    "metric of the registry",
    metavar="NAME",
    action="append",
)


def _metric_help() -> str:
    """``--metric``'s help, naming the registry's metrics as they are when the parser is
    built (so a metric registered after this module was imported is named too)."""
    return f"{METRIC.help.removesuffix('a metric of the registry')}{', '.join(METRIC_NAMES)}"


THRESHOLD = Option(
    "--threshold",
    "pass mark for the pass rate (repeatable, e.g. 0.7 or faithfulness=0.8)",
    type=per_metric,
    metavar="[METRIC=]X",
    action="append",
)
METRIC_FILE = Option(
    "--metric-file",
    "repeatable: a metric that answer-metrics align saved (its examples, judges' weights, "
    "threshold), built with the judges of --config or --base-url",
    type=Path,
    metavar="FILE",
    action="append",
)
SEED = Option("--seed", "the seed of what is drawn at random (default 0)", type=int, default=0)


def add_metric_options(
    container: argparse._ArgumentGroup,
    *,
    metric_help: str | None = None,
    threshold_help: str | None = None,
) -> None:
    """``--metric``, ``--threshold`` and each metric's own settings (``--criterion`` ...)."""
    METRIC.add_to(container, help=metric_help or _metric_help())
    THRESHOLD.add_to(container, help=threshold_help)
    add_metric_settings(container)


def add_scoring_options(parser: argparse.ArgumentParser, *, estimate: bool = True) -> None:
    """The options of a command that scores a dataset (``evaluate``, ``demo``,
    ``calibrate``): the metrics, the models, the limits, (the estimate and batch mode),
    the output."""
    metrics = parser.add_argument_group("metrics")
    add_metric_options(metrics)
    METRIC_FILE.add_to(metrics)
    models = parser.add_argument_group("models (LLM-judged metrics)")
    add_options(models, *JUDGES, MAX_CONCURRENCY)
    limits = parser.add_argument_group("limits and cost")
    add_options(limits, *LIMITS)
    if estimate:
        add_options(limits, ESTIMATE, ESTIMATE_JSON)
        add_options(
            parser.add_argument_group("batch mode (OpenAI Batch API: half the price)"), *BATCH
        )
    add_options(parser.add_argument_group("output"), *OUTPUT)
