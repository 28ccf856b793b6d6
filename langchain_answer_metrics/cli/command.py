"""The ``answer-metrics`` command: score a dataset file, print a table, gate CI.

    answer-metrics demo                                   # offline, bundled en/ru/zh data
    answer-metrics evaluate qa.jsonl --metric semantic_similarity --report report.html
    answer-metrics evaluate qa.csv --metric factual_correctness --metric faithfulness \\
        --base-url http://localhost:11434/v1 --model qwen2.5:7b --out results.jsonl \\
        --fail-under 0.7

This face is thin: it parses arguments and hands them to
:func:`langchain_answer_metrics.cli.run.run`, which builds the metrics, streams the samples
through the runner and prints (:mod:`langchain_answer_metrics.cli.printing`). The metrics
it offers, and their flags, come from
:data:`langchain_answer_metrics.metrics.registry.METRICS`.

Exit codes: 0 every sample scored and every gate passed; 1 a metric's mean is below
``--fail-under``; 2 bad arguments, unreadable data or config, an unwritable
``--out``/``--report`` or no usable model (with a one-line error saying what to fix); 3 the
run finished but some samples have metric errors (``--allow-errors`` makes it 0); 4 an
internal error, i.e. a bug (one line naming the exception; ``ANSWER_METRICS_DEBUG=1`` adds
the traceback); 5 stopped early by ``--max-cost``, ``--max-requests`` or the circuit
breaker (``--max-consecutive-failures``); 130 interrupted (what was written to ``--out``
is kept; rerun to resume).
Whatever happens, the process ends: if it has not exited :data:`EXIT_GRACE_SECONDS` after
the run, it is ended with the run's exit code.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import os
import sys
import threading
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from langchain_answer_metrics.cli.batch import BATCH_EXIT_CODES, add_batch_arguments
from langchain_answer_metrics.cli.exits import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_USAGE
from langchain_answer_metrics.cli.interrupts import CTRL_C, exit_now
from langchain_answer_metrics.cli.options import (
    UsageError,
    add_column_options,
    add_metric_settings,
    argument_type,
)
from langchain_answer_metrics.cli.simulate import add_simulate_parser
from langchain_answer_metrics.cli.subcommand_args import (
    add_align_parser,
    add_calibrate_options,
    add_compare_arguments,
)
from langchain_answer_metrics.cli.toy_judge import add_toy_judge_parser
from langchain_answer_metrics.judging.limits import DEFAULT_MAX_CONCURRENCY
from langchain_answer_metrics.metrics.registry import METRIC_NAMES, positive_int, unit_interval

# Each command imports what it runs once its arguments are parsed: ``--help`` and a bad
# argument load no metric, no LangChain Runnable and no LangSmith (tests/test_cli_startup.py).

EXIT_GRACE_SECONDS = 10.0
"""How long the process may take to exit after the run before it is ended anyway (a
thread left blocked by a failure must not keep a CI job hanging)."""

DEBUG_ENV = "ANSWER_METRICS_DEBUG"

# --------------------------------------------------------------------------- arguments


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error instead of the usage block."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _per_metric(text: str) -> tuple[str | None, float]:
    """``0.7`` (every metric) or ``faithfulness=0.8`` (one metric)."""
    name, sep, value = text.rpartition("=")
    return (name.strip() if sep else None), unit_interval(value.strip())


_positive_int = argument_type(positive_int)


def _add_run_options(parser: argparse.ArgumentParser, *, estimate: bool = True) -> None:
    metrics = parser.add_argument_group("metrics")
    metrics.add_argument(
        "--metric",
        action="append",
        default=[],
        metavar="NAME",
        help="repeatable or comma-separated: a judge declared under metrics: in --config, "
        f"or {', '.join(METRIC_NAMES)}",
    )
    metrics.add_argument(
        "--threshold",
        action="append",
        type=argument_type(_per_metric),
        default=[],
        metavar="[METRIC=]X",
        help="pass mark for the pass rate (repeatable, e.g. 0.7 or faithfulness=0.8)",
    )
    add_metric_settings(metrics)  # each metric's own: --criterion, --strictness ...
    metrics.add_argument(
        "--metric-file",
        action="append",
        default=[],
        type=Path,
        metavar="FILE",
        help="repeatable: a metric that answer-metrics align saved (its examples, judges' "
        "weights, threshold), built with the judges of --config or --base-url",
    )

    models = parser.add_argument_group("models (LLM-judged metrics)")
    models.add_argument("--config", type=Path, metavar="FILE", help="models YAML file")
    models.add_argument(
        "--base-url",
        metavar="URL",
        help="any OpenAI-compatible endpoint (Ollama, vLLM ...); each request's deadline is "
        "ANSWER_METRICS_TIMEOUT seconds (default 120)",
    )
    models.add_argument("--model", metavar="ID", help="judge model id (with --base-url or env)")
    models.add_argument(
        "--embedding-model",
        metavar="ID",
        help="remote embedding model instead of the bundled local one",
    )
    models.add_argument(
        "--max-concurrency",
        type=_positive_int,
        default=DEFAULT_MAX_CONCURRENCY,
        metavar="N",
        help=f"model requests in flight (default {DEFAULT_MAX_CONCURRENCY})",
    )

    limits = parser.add_argument_group("limits and cost")
    limits.add_argument(
        "--max-cost",
        type=argument_type(_usd),
        metavar="USD",
        help="stop starting samples once the next would take the spend past USD (needs a "
        "price for every model: built in for common OpenAI models, or `price:` in --config)",
    )
    limits.add_argument(
        "--max-requests",
        type=_positive_int,
        metavar="N",
        help="stop starting samples once the next would take the requests past N",
    )
    limits.add_argument(
        "--max-consecutive-failures",
        type=_positive_int,
        metavar="N",
        help="exclude a judge (stop the run when none is left, or an embedding endpoint "
        "fails) when N of its requests in a row fail with connection errors, timeouts or "
        "5xx, retries counted (default 20, or the config file's); 3 timeouts in a row too",
    )
    limits.add_argument(
        "--no-preflight",
        action="store_true",
        help="above 20 samples, each judge is first checked with one short request through "
        "its structured-output method, and a judge that cannot answer is refused (exit 2): "
        "skip that check",
    )
    if estimate:
        limits.add_argument(
            "--estimate",
            action="store_true",
            help="send no request: print the expected requests, tokens and cost per model",
        )
        limits.add_argument(
            "--json",
            type=Path,
            metavar="PATH",
            dest="estimate_json",
            help="with --estimate: also write the estimate as JSON",
        )
        add_batch_arguments(parser, argument_type)  # --batch and its options: cli/batch.py

    output = parser.add_argument_group("output")
    output.add_argument("--out", type=Path, metavar="FILE", help="per-sample JSONL; resumes")
    output.add_argument("--report", type=Path, metavar="FILE", help="self-contained HTML report")
    output.add_argument(
        "--summary-json",
        type=Path,
        metavar="PATH",
        help="the run's summary as JSON for CI: means, CIs, pass rates, errors, usage",
    )
    output.add_argument(
        "--fail-under",
        action="append",
        type=argument_type(_per_metric),
        default=[],
        metavar="[METRIC=]X",
        help="exit 1 when a metric's mean is below X (repeatable, e.g. faithfulness=0.8)",
    )
    output.add_argument("--quiet", action="store_true", help="no progress bar and no spend block")
    output.add_argument(
        "--allow-errors",
        action="store_true",
        help="exit 0, not 3, when some samples have metric errors",
    )
    output.add_argument(
        "--keep-degraded",
        action="store_true",
        help="on resume, keep scores made without a judge that failed (default: redo them)",
    )


EXIT_CODES = (
    "Exit codes: 0 every sample scored and every gate passed; 1 a gate failed (below "
    "--fail-under); 2 bad arguments, data, config or output file; 3 the run finished but "
    "some samples have metric errors (--allow-errors: 0); 4 internal error (a bug; please "
    "report it); 5 stopped early by --max-cost, --max-requests, a failing endpoint or "
    "broken judges (the "
    "samples not run are listed as such; rerun to continue from --out); 130 interrupted "
    "(rerun the same command to resume from --out);" + BATCH_EXIT_CODES
)


def _usd(text: str) -> float:
    value = float(text.strip().removeprefix("$"))
    if not value >= 0 or value == float("inf"):
        raise ValueError(f"{text!r} is not an amount of USD >= 0")
    return value


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("langchain-answer-metrics")
    except PackageNotFoundError:  # run from a source tree without installing
        return "(not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="answer-metrics",
        description="Score answers in a dataset file with LLM-judged and embedding metrics.",
        epilog=EXIT_CODES,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    evaluate = commands.add_parser(
        "evaluate",
        help="score a JSONL, JSON or CSV file",
        description="Score every sample of DATA; prints a summary table per metric.",
        epilog=EXIT_CODES,
    )
    evaluate.add_argument(
        "data", type=Path, metavar="DATA", help=".jsonl, .json, .csv or .parquet file"
    )
    add_column_options(evaluate)
    _add_run_options(evaluate)

    demo = commands.add_parser(
        "demo",
        help="score the bundled en/ru/zh dataset offline",
        description="Score the bundled multilingual demo dataset offline: FactualCorrectness "
        "and Faithfulness with their claims, judged by the toy judge (a rule-based stand-in "
        "run in this process, not a real judge) unless --config, --base-url or --model names "
        "one, and SemanticSimilarity with the local embedding model.",
    )
    _add_run_options(demo)
    demo.add_argument(
        "--compare",
        action="store_true",
        help="also score a variant of the demo (some answers fixed, some broken) and "
        "compare the two runs (--report: the compare report)",
    )

    calibrate = commands.add_parser(
        "calibrate",
        help="set a metric's scores against human labels",
        description="Score the labelled rows of DATA like evaluate (same options; --out "
        "resumes), then report how the judges agree with the labels (--label-col) and with "
        "each other.",
    )
    calibrate.add_argument("data", type=Path, metavar="DATA", help=".jsonl, .json or .csv file")
    add_column_options(calibrate)
    add_calibrate_options(calibrate)
    _add_run_options(calibrate, estimate=False)

    compare = commands.add_parser(
        "compare",
        help="compare two --out files of the same dataset",
        description="Per metric: the paired mean difference (candidate - baseline) with a "
        "bootstrap 95%% CI and a sign-flip permutation p-value, and the most regressed samples.",
    )
    add_compare_arguments(compare)

    add_align_parser(commands)
    add_simulate_parser(commands)
    add_toy_judge_parser(commands)
    return parser


# --------------------------------------------------------------------------- entry point


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point: ``answer-metrics`` (Ctrl-C: :mod:`.interrupts`)."""
    with CTRL_C.installed():
        try:
            code = _main(argv)
        except KeyboardInterrupt:
            code = EXIT_INTERRUPTED
            print("\ninterrupted", file=sys.stderr)
        return CTRL_C.exit_code(code)


def _main(argv: Sequence[str] | None) -> int:
    for stream in (sys.stdout, sys.stderr):
        # Dataset text may be Chinese or Russian; never crash on a narrow console encoding.
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="replace")
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command not in ("evaluate", "demo", "calibrate"):
        CTRL_C.raise_at_once()  # not a run (toy-judge serves until Ctrl-C): Python's way
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    if getattr(args, "estimate_json", None) is not None and not args.estimate:
        parser.error("--json PATH goes with --estimate (it writes the estimate)")
    try:
        if getattr(args, "metric_file", None):
            from langchain_answer_metrics.cli.aligned_files import with_metric_files

            args.metric = with_metric_files(args)
        if args.command == "demo" and args.compare:
            from langchain_answer_metrics.cli.compare import run_demo_compare

            return run_demo_compare(args)
        if args.command == "demo":
            from langchain_answer_metrics.cli.demo import run_demo

            return run_demo(args, _run)
        if args.command == "calibrate":
            from langchain_answer_metrics.cli.calibrate import run_calibrate

            return run_calibrate(args)
        if args.command == "align":
            from langchain_answer_metrics.cli.align import run_align

            return run_align(args)
        if args.command == "simulate":
            from langchain_answer_metrics.cli.simulate import run_simulate

            return run_simulate(args)
        if args.command == "toy-judge":
            from langchain_answer_metrics.cli.toy_judge import run_toy_judge

            return run_toy_judge(args)
        if args.command == "compare":
            from langchain_answer_metrics.cli.compare import run_compare

            return run_compare(args)
        return _run(args, args.data, title=str(args.data), default_metrics=[])
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as error:
        if not _is_users_to_fix(error):
            return _internal_error(error)
        from langchain_answer_metrics.cli.terminal import for_terminal

        # A config error may list several problems, one per line.
        message = "\n".join(for_terminal(line) for line in str(error).splitlines())
        print(f"answer-metrics: error: {message}", file=sys.stderr)
        return EXIT_USAGE


def _run(args: argparse.Namespace, data: Path, *, title: str, default_metrics: list[str]) -> int:
    """The run, its options and data checked first: their errors come before the run's
    machinery (LangChain, the metrics, the models) is loaded."""
    from langchain_answer_metrics.cli.run_checks import check_run

    CTRL_C.starting_run()  # from now on Ctrl-C is honoured at a safe point, exit 130
    checked = check_run(args, data, default_metrics)
    from langchain_answer_metrics.cli.run import run_checked

    return run_checked(args, data, checked, title=title)


_USERS_TO_FIX = (
    ("langchain_answer_metrics.cli.datasets", "DatasetError"),
    ("langchain_answer_metrics.config.errors", "ConfigError"),
    ("langchain_answer_metrics.judging.batch.provider", "BatchUnavailableError"),
)
"""Where the errors a user fixes (exit 2) are defined, besides :class:`UsageError`."""


def _is_users_to_fix(error: Exception) -> bool:
    """Whether ``error`` is bad data or config (exit 2), not a bug. Its class is looked up
    only if its module is loaded: an error of a module never imported cannot be raised,
    and importing the config and the reader here would slow every command's start."""
    if isinstance(error, UsageError):
        return True
    return any(
        module in sys.modules and isinstance(error, getattr(sys.modules[module], name))
        for module, name in _USERS_TO_FIX
    )


def _internal_error(error: Exception) -> int:
    """One line naming an unexpected exception (a bug), instead of a traceback or a hang."""
    from langchain_answer_metrics.cli.terminal import for_terminal

    detail = str(error) or "(no message)"
    print(
        f"answer-metrics: internal error: {for_terminal(type(error).__name__)}: "
        f"{for_terminal(detail)} (this is a bug; please report it, with the traceback "
        f"that {DEBUG_ENV}=1 prints)",
        file=sys.stderr,
    )
    if os.environ.get(DEBUG_ENV):
        from langchain_answer_metrics.core.redaction import redact

        for chunk in traceback.format_exception(error):
            sys.stderr.write(redact(chunk))
    return EXIT_INTERNAL


def console() -> NoReturn:
    """The ``answer-metrics`` command: :func:`main`, then exit, within a grace period."""
    CTRL_C.install()  # kept until the process exits (cli.console installed it first)
    code = CTRL_C.exiting(main())  # a Ctrl-C from now on exits 130 at once
    _end_within(EXIT_GRACE_SECONDS, code)
    _exit_before_finalization(code)


def _exit_before_finalization(code: int) -> NoReturn:
    """Exit as ``sys.exit`` would (the threads joined, the exit functions run), but
    without the interpreter's finalization: it puts SIGINT's default action back, so a
    Ctrl-C landing then killed the process (exit -2) instead of ending it with 130."""
    main_thread = threading.main_thread()
    for thread in threading.enumerate():
        if thread is not main_thread and not thread.daemon:
            thread.join()  # bounded: _end_within ends the process past the grace period
    atexit._run_exitfuncs()
    exit_now(code)


def _end_within(seconds: float, code: int) -> None:
    """End the process with ``code`` if it is still alive ``seconds`` from now.

    Exiting waits for every non-daemon thread; one left blocked by a failure (a model
    call that never returns) would keep the process alive for ever.
    """

    def end() -> None:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)

    timer = threading.Timer(seconds, end)
    timer.daemon = True
    timer.start()


if __name__ == "__main__":
    console()
