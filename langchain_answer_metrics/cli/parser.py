"""The ``answer-metrics`` argument parser: every command's arguments and help.

The options several commands take are declared once, in
:mod:`~langchain_answer_metrics.cli.option_groups`; each command here adds the groups it
needs and its own arguments. Building the parser (``--help``, a bad argument) loads none of
what the commands run.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import NoReturn

from langchain_answer_metrics.cli.batch import BATCH_EXIT_CODES
from langchain_answer_metrics.cli.exits import EXIT_USAGE
from langchain_answer_metrics.cli.option_groups import (
    BASE_URL,
    CONFIG,
    ESTIMATE,
    LABEL_COL,
    MAX_CONSECUTIVE_FAILURES,
    MAX_COST,
    MAX_REQUESTS,
    MODEL,
    OUT,
    QUIET,
    REPORT,
    SEED,
    STATISTICS_JSON,
    add_metric_options,
    add_model_options,
    add_scoring_options,
)
from langchain_answer_metrics.cli.option_spec import Option
from langchain_answer_metrics.cli.options import add_column_options
from langchain_answer_metrics.metrics.registry import positive_int

EXIT_CODES = (
    "Exit codes: 0 every sample scored and every gate passed; 1 a gate failed (below "
    "--fail-under); 2 bad arguments, data, config or output file; 3 the run finished but "
    "some samples have metric errors (--allow-errors: 0); 4 internal error (a bug; please "
    "report it); 5 stopped early by --max-cost, --max-requests, a failing endpoint or "
    "broken judges (the "
    "samples not run are listed as such; rerun to continue from --out); 130 interrupted "
    "(rerun the same command to resume from --out);" + BATCH_EXIT_CODES
)

PAIRWISE = ("pairwise",)
"""What ``compare --judge`` judges."""


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error instead of the usage block."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("langchain-answer-metrics")
    except PackageNotFoundError:  # run from a source tree without installing
        return "(not installed)"


def _data(parser: argparse.ArgumentParser, formats: str = ".jsonl, .json or .csv file") -> None:
    parser.add_argument("data", type=Path, metavar="DATA", help=formats)


def build_parser() -> argparse.ArgumentParser:
    """The ``answer-metrics`` parser, with every command."""
    parser = _Parser(
        prog="answer-metrics",
        description="Score answers in a dataset file with LLM-judged and embedding metrics.",
        epilog=EXIT_CODES,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    _add_evaluate(commands)
    _add_demo(commands)
    _add_calibrate(commands)
    _add_compare(commands)
    _add_align(commands)
    _add_simulate(commands)
    _add_toy_judge(commands)
    return parser


# --------------------------------------------------------------------------- scoring


def _add_evaluate(commands: argparse._SubParsersAction) -> None:
    evaluate = commands.add_parser(
        "evaluate",
        help="score a JSONL, JSON or CSV file",
        description="Score every sample of DATA; prints a summary table per metric.",
        epilog=EXIT_CODES,
    )
    _data(evaluate, ".jsonl, .json, .csv or .parquet file")
    add_column_options(evaluate)
    add_scoring_options(evaluate)


def _add_demo(commands: argparse._SubParsersAction) -> None:
    demo = commands.add_parser(
        "demo",
        help="score the bundled en/ru/zh dataset offline",
        description="Score the bundled multilingual demo dataset offline: FactualCorrectness "
        "and Faithfulness with their claims, judged by the toy judge (a rule-based stand-in "
        "run in this process, not a real judge) unless --config, --base-url or --model names "
        "one, and SemanticSimilarity with the local embedding model.",
    )
    add_scoring_options(demo)
    demo.add_argument(
        "--compare",
        action="store_true",
        help="also score a variant of the demo (some answers fixed, some broken) and "
        "compare the two runs (--report: the compare report)",
    )


def _add_calibrate(commands: argparse._SubParsersAction) -> None:
    calibrate = commands.add_parser(
        "calibrate",
        help="set a metric's scores against human labels",
        description="Score the labelled rows of DATA like evaluate (same options; --out "
        "resumes), then report how the judges agree with the labels (--label-col) and with "
        "each other.",
    )
    _data(calibrate)
    add_column_options(calibrate)
    LABEL_COL.add_to(calibrate, default="label", help=f"{LABEL_COL.help} (default: label)")
    STATISTICS_JSON.add_to(calibrate)
    add_scoring_options(calibrate, estimate=False)


# --------------------------------------------------------------------------- compare


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


def _add_compare(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "compare",
        help="compare two --out files of the same dataset",
        description="Per metric: the paired mean difference (candidate - baseline) with a "
        "bootstrap 95%% CI and a sign-flip permutation p-value, and the most regressed samples.",
    )
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
    REPORT.add_to(parser, help="HTML diff report")
    STATISTICS_JSON.add_to(parser)
    group = parser.add_argument_group("judged comparison (--judge pairwise)")
    group.add_argument(
        "--judge",
        choices=PAIRWISE,
        help="also judge each pair of responses (baseline as A, candidate as B) in both "
        "orders: wins, losses, ties, win rate with a 95%% CI, position bias per judge",
    )
    group.add_argument("--criterion", metavar="TEXT", help="what the responses are compared on")
    add_model_options(group, embeddings=False)
    MAX_COST.add_to(group, help="stop starting pairs once the next would take the spend past USD")
    MAX_REQUESTS.add_to(
        group, help="stop starting pairs once the next would take the requests past N"
    )
    MAX_CONSECUTIVE_FAILURES.add_to(
        group,
        help="stop when N requests in a row to one endpoint fail (default 20, or the config's)",
    )
    ESTIMATE.add_to(
        group, help="send no request: print the expected requests, tokens and cost of judging"
    )
    QUIET.add_to(group, help="no progress bar")


# --------------------------------------------------------------------------- align


def _add_align(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "align",
        help="fit a metric's judges to human labels; the gain on held-out rows",
        description="Score the labelled rows of DATA, fit few-shot examples, per-judge "
        "weights and a threshold on training rows, and measure agreement with the labels "
        "before and after on rows the fit never saw (k-fold, or --holdout). Writes the "
        "aligned metric to --out.",
    )
    _data(parser)
    add_column_options(parser)
    labels = parser.add_argument_group("labels")
    LABEL_COL.add_to(
        labels,
        default="human",
        help="the human label: pass/fail or a score in [0, 1] (default: human)",
    )
    labels.add_argument(
        "--explanation-col", metavar="NAME", help="the humans' explanations: the examples' reasons"
    )
    metric = parser.add_argument_group("metric and models")
    add_metric_options(
        metric,
        metric_help="the metric to align: aspect_critic, faithfulness, factual_correctness",
        threshold_help="the metric's pass mark before alignment (default: 0.5)",
    )
    add_model_options(
        metric, embedding_help="with --select similar and --base-url: the embedding model id"
    )
    _add_alignment_fit(parser.add_argument_group("alignment"))
    out = parser.add_argument_group("output")
    OUT.add_to(out, help="the aligned metric (.yaml or .json)", required=True)
    out.add_argument(
        "--scores",
        type=Path,
        metavar="FILE",
        help="keep every score as it arrives (JSONL, the runner's checkpoint); the same "
        "command resumes from it, sending only what is missing",
    )
    REPORT.add_to(out, help="HTML report")
    STATISTICS_JSON.add_to(out, help="the gain and the fit as JSON")
    QUIET.add_to(out, help="no progress lines")


def _add_alignment_fit(fit: argparse._ArgumentGroup) -> None:
    """How ``align`` fits and measures."""
    folds = Option("--folds", "k-fold cross-validation (default 5)", type=positive_int, default=5)
    folds.add_to(fit, metavar="K")
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
    SEED.add_to(fit, help="splits and bootstrap (default 0)")
    MAX_COST.add_to(fit, help="stop before the spend would pass USD (needs prices in --config)")


# --------------------------------------------------------------------------- simulate


def _add_simulate(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "simulate",
        help="simulate conversations with your app, for evaluate to score",
        description="Drive your app (a LangGraph graph, a Runnable or a callable: "
        "--app module:attribute) with a simulated user per scenario of SCENARIOS (YAML: "
        "name, goal, persona, first_turns), and write the conversations as JSONL (--out). "
        "The first judge of --config / --base-url / OPENAI_API_KEY plays the user.",
    )
    parser.add_argument("scenarios", type=Path, metavar="SCENARIOS", help=".yaml or .json file")
    parser.add_argument(
        "--app",
        required=True,
        metavar="MODULE:ATTR",
        help="your app: a module on the path and the attribute that holds the app",
    )
    OUT.add_to(
        parser,
        help="the conversations, one JSON line per scenario (messages in OpenAI form, goal)",
        metavar="PATH",
    )
    parser.add_argument(
        "--cache",
        type=Path,
        metavar="PATH",
        help="the replay cache of the simulated user's moves (a rerun replays them)",
    )
    parser.add_argument("--max-turns", type=int, default=6, metavar="N", help="default 6")
    SEED.add_to(parser, metavar="N", help="default 0")
    parser.add_argument(
        "--stop-phrase",
        action="append",
        default=[],
        metavar="TEXT",
        help="end a conversation when either side writes TEXT (repeatable)",
    )
    ESTIMATE.add_to(
        parser,
        help="say how many requests the user model would get, asking it nothing: the "
        "moves in --cache replay (the app is called); nothing is written",
    )
    CONFIG.add_to(parser)
    BASE_URL.add_to(parser)
    MODEL.add_to(parser, help="the user model's id on --base-url")


def _add_toy_judge(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "toy-judge",
        help="serve a toy judge on 127.0.0.1 to try everything without a key",
        description="Serve a toy, rule-based judge (and toy embeddings) behind the OpenAI "
        "API on 127.0.0.1, to run the examples offline. Its scores are not real judgments. "
        "Point ChatOpenAI and the command line at it with OPENAI_BASE_URL; stop it with "
        "Ctrl-C.",
    )
    parser.add_argument(
        "--port",
        type=int,
        default=8011,
        metavar="N",
        help="port on 127.0.0.1 (default 8011; 0 picks a free one)",
    )
