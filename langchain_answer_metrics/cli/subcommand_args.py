"""The arguments of ``calibrate``, ``compare`` (and its judged comparison) and ``align``,
apart from what those commands run: building the parser (``--help``, a bad argument)
loads none of it.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from langchain_answer_metrics.cli.options import (
    add_column_options,
    add_metric_settings,
    argument_type,
)
from langchain_answer_metrics.judging.limits import DEFAULT_MAX_CONCURRENCY
from langchain_answer_metrics.metrics.registry import positive_int, unit_interval

JUDGES = ("pairwise",)


def add_calibrate_options(parser: argparse.ArgumentParser) -> None:
    """What ``calibrate`` adds to ``evaluate``'s options."""
    parser.add_argument(
        "--label-col",
        default="label",
        metavar="NAME",
        help="the column of the human label: pass/fail (true/false) or a score in [0, 1] "
        "(default: label)",
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="the statistics as JSON")


def _delta(text: str) -> tuple[str, float]:
    name, sep, value = text.rpartition("=")
    try:
        delta = float(value)
    except ValueError:
        delta = -1.0
    if not sep or not name.strip() or not 0.0 <= delta <= 1.0:
        raise argparse.ArgumentTypeError(
            f"expected METRIC=DELTA with DELTA in [0, 1], e.g. faithfulness=0.05, got {text!r}"
        )
    return name.strip(), delta


def add_compare_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("baseline", type=Path, metavar="BASELINE", help="--out file of run A")
    parser.add_argument("candidate", type=Path, metavar="CANDIDATE", help="--out file of run B")
    parser.add_argument(
        "--fail-on-regression",
        action="append",
        type=_delta,
        default=[],
        metavar="METRIC=DELTA",
        help="exit 1 when METRIC's mean drops by more than DELTA and the 95%% CI excludes 0 "
        "(repeatable)",
    )
    parser.add_argument("--report", type=Path, metavar="FILE", help="HTML diff report")
    parser.add_argument("--json", type=Path, metavar="FILE", help="the statistics as JSON")
    add_judge_arguments(parser)


def _usd(text: str) -> float:
    value = float(text.strip().removeprefix("$"))
    if not value >= 0 or value == float("inf"):
        raise ValueError(f"{text!r} is not an amount of USD >= 0")
    return value


def add_judge_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of a judged comparison, in a group of their own."""
    group = parser.add_argument_group("judged comparison (--judge pairwise)")
    group.add_argument(
        "--judge",
        choices=JUDGES,
        help="also judge each pair of responses (baseline as A, candidate as B) in both "
        "orders: wins, losses, ties, win rate with a 95%% CI, position bias per judge",
    )
    group.add_argument("--criterion", metavar="TEXT", help="what the responses are compared on")
    group.add_argument("--config", type=Path, metavar="FILE", help="models YAML file (the judges)")
    group.add_argument("--base-url", metavar="URL", help="any OpenAI-compatible endpoint")
    group.add_argument("--model", metavar="ID", help="judge model id (with --base-url or env)")
    positive = argument_type(positive_int)
    group.add_argument(
        "--max-concurrency",
        type=positive,
        default=DEFAULT_MAX_CONCURRENCY,
        metavar="N",
        help=f"model requests in flight (default {DEFAULT_MAX_CONCURRENCY})",
    )
    group.add_argument(
        "--max-cost",
        type=argument_type(_usd),
        metavar="USD",
        help="stop starting pairs once the next would take the spend past USD",
    )
    group.add_argument(
        "--max-requests",
        type=positive,
        metavar="N",
        help="stop starting pairs once the next would take the requests past N",
    )
    group.add_argument(
        "--max-consecutive-failures",
        type=positive,
        metavar="N",
        help="stop when N requests in a row to one endpoint fail (default 20, or the config's)",
    )
    group.add_argument(
        "--estimate",
        action="store_true",
        help="send no request: print the expected requests, tokens and cost of judging",
    )
    group.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(embedding_model=None)  # the panel's reader asks for it


def add_align_parser(commands: Any) -> None:
    """The ``align`` subcommand and its options."""
    parser = commands.add_parser(
        "align",
        help="fit a metric's judges to human labels; the gain on held-out rows",
        description="Score the labelled rows of DATA, fit few-shot examples, per-judge "
        "weights and a threshold on training rows, and measure agreement with the labels "
        "before and after on rows the fit never saw (k-fold, or --holdout). Writes the "
        "aligned metric to --out.",
    )
    parser.add_argument("data", type=Path, metavar="DATA", help=".jsonl, .json or .csv file")
    add_column_options(parser)
    labels = parser.add_argument_group("labels")
    labels.add_argument(
        "--label-col",
        default="human",
        metavar="NAME",
        help="the human label: pass/fail or a score in [0, 1] (default: human)",
    )
    labels.add_argument(
        "--explanation-col", metavar="NAME", help="the humans' explanations: the examples' reasons"
    )
    metric = parser.add_argument_group("metric and models")
    metric.add_argument(
        "--metric",
        action="append",
        default=[],
        metavar="NAME",
        help="the metric to align: aspect_critic, faithfulness, factual_correctness",
    )
    metric.add_argument(
        "--threshold",
        type=argument_type(unit_interval),
        metavar="X",
        help="the metric's pass mark before alignment (default: 0.5)",
    )
    add_metric_settings(metric)
    metric.add_argument("--config", type=Path, metavar="FILE", help="models YAML file")
    metric.add_argument("--base-url", metavar="URL", help="an OpenAI-compatible endpoint")
    metric.add_argument("--model", metavar="ID", help="judge model id (with --base-url)")
    metric.add_argument(
        "--embedding-model",
        metavar="ID",
        help="with --select similar and --base-url: the embedding model id",
    )
    metric.add_argument(
        "--max-concurrency",
        type=argument_type(positive_int),
        default=DEFAULT_MAX_CONCURRENCY,
        metavar="N",
        help=f"model requests in flight (default {DEFAULT_MAX_CONCURRENCY})",
    )
    fit = parser.add_argument_group("alignment")
    fit.add_argument(
        "--folds",
        type=argument_type(positive_int),
        default=5,
        metavar="K",
        help="k-fold cross-validation (default 5)",
    )
    fit.add_argument(
        "--holdout",
        type=float,
        metavar="FRACTION",
        help="instead of folds: hold out this fraction of the rows",
    )
    fit.add_argument(
        "--holdout-col",
        metavar="NAME",
        help="instead of folds: rows whose NAME is test/holdout/true are held out",
    )
    fit.add_argument(
        "--examples-per-step",
        type=int,
        default=4,
        metavar="N",
        help="new few-shot examples per judge step, at most (default 4)",
    )
    fit.add_argument(
        "--select",
        choices=("disagreements", "similar"),
        default="disagreements",
        help="disagreements: the worst ones, the same in every prompt (default); "
        "similar: per sample, the --examples-per-step nearest it by embedding "
        "(the --config embedding model, else the bundled local one)",
    )
    fit.add_argument("--no-weights", action="store_true", help="keep every judge, unweighted")
    fit.add_argument("--no-threshold", action="store_true", help="keep the pass threshold")
    fit.add_argument("--seed", type=int, default=0, help="splits and bootstrap (default 0)")
    fit.add_argument(
        "--max-cost",
        type=float,
        metavar="USD",
        help="stop before the spend would pass USD (needs prices in --config)",
    )
    out = parser.add_argument_group("output")
    out.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="FILE",
        help="the aligned metric (.yaml or .json)",
    )
    out.add_argument("--report", type=Path, metavar="FILE", help="HTML report")
    out.add_argument("--json", type=Path, metavar="FILE", help="the gain and the fit as JSON")
    out.add_argument("--quiet", action="store_true", help="no progress lines")
