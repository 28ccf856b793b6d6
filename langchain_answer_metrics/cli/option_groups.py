"""Every option that more than one command takes, declared once (an
:class:`~langchain_answer_metrics.cli.option_spec.Option`: its flag, its one type, the
validator that reads it, naming the flag in its error, its default, metavar and help),
grouped by concern. The parsers (:mod:`~langchain_answer_metrics.cli.parser`) add the
groups they need, and :mod:`~langchain_answer_metrics.cli.group_options` reads each group
into one typed object.

- judges: ``--config``, ``--base-url``, ``--model``, ``--embedding-model``, and with
  ``--max-concurrency`` the models' group (:func:`add_model_options`);
- limits: ``--max-cost``, ``--max-requests``, ``--max-consecutive-failures``,
  ``--no-preflight``;
- estimate: ``--estimate``, ``--json``;
- batch: ``--batch``, ``--batch-poll``, ``--batch-wait``, ``--batch-min-requests``,
  ``--batch-cancel``, ``--batch-keep-files``;
- output: ``--out``, ``--report``, ``--summary-json``, ``--fail-under``, ``--quiet``,
  ``--allow-errors``, ``--keep-degraded``;
- metrics: ``--metric``, ``--threshold``, each metric's settings, ``--metric-file``;
- labels: ``--label-col`` (``calibrate``, ``align``).

Light on purpose: building the parser (``--help``, a bad argument) loads no metric.

    >>> parser = argparse.ArgumentParser()
    >>> add_options(parser, MAX_CONCURRENCY, MAX_COST)
    >>> parser.parse_args(["--max-cost", "$2.5"]).max_cost
    2.5
"""

from __future__ import annotations

import argparse
from pathlib import Path

from langchain_answer_metrics.cli.option_spec import (
    Container,
    Option,
    add_options,
    duration,
    per_metric,
    seconds,
    usd,
)
from langchain_answer_metrics.cli.options import add_metric_settings
from langchain_answer_metrics.judging.batch.rounds import DEFAULT_BATCH_MIN_REQUESTS
from langchain_answer_metrics.judging.limits import DEFAULT_MAX_CONCURRENCY
from langchain_answer_metrics.metrics.registry import METRIC_NAMES, positive_int

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


def add_model_options(
    container: Container, *, embeddings: bool = True, embedding_help: str | None = None
) -> None:
    """The models a command asks and how many requests at once: ``--config``,
    ``--base-url``, ``--model``, ``--embedding-model`` (unless ``embeddings`` is False; its
    help in the command's words: ``embedding_help``) and ``--max-concurrency``."""
    add_options(container, CONFIG, BASE_URL, MODEL)
    if embeddings:
        EMBEDDING_MODEL.add_to(container, help=embedding_help)
    MAX_CONCURRENCY.add_to(container)


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

# --------------------------------------------------------------------------- labels

LABEL_COL = Option(
    "--label-col",
    "the column of the human label: pass/fail (true/false) or a score in [0, 1]",
    metavar="NAME",
)
"""Where a labelled file (``calibrate``, ``align``) holds the human label; each command
gives its default (``add_to(default=...)``)."""


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
    add_model_options(parser.add_argument_group("models (LLM-judged metrics)"))
    limits = parser.add_argument_group("limits and cost")
    add_options(limits, *LIMITS)
    if estimate:
        add_options(limits, ESTIMATE, ESTIMATE_JSON)
        add_options(
            parser.add_argument_group("batch mode (OpenAI Batch API: half the price)"), *BATCH
        )
    add_options(parser.add_argument_group("output"), *OUTPUT)
