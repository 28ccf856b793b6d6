"""The ``answer-metrics`` command: score a dataset file, print a table, gate CI.

    answer-metrics demo                                   # offline, bundled en/ru/zh data
    answer-metrics evaluate qa.jsonl --metric semantic_similarity --report report.html
    answer-metrics evaluate qa.csv --metric factual_correctness --metric faithfulness \\
        --base-url http://localhost:11434/v1 --model qwen2.5:7b --out results.jsonl \\
        --fail-under 0.7

This face is thin: it parses the arguments (:mod:`~langchain_answer_metrics.cli.parser`,
each shared option declared once in :mod:`~langchain_answer_metrics.cli.option_groups`),
reads them once into the command's typed options
(:mod:`~langchain_answer_metrics.cli.command_options`) and hands those to the command's
entry point (:mod:`langchain_answer_metrics.cli.commands`). The metrics it offers, and
their flags, come from :data:`langchain_answer_metrics.metrics.registry.METRICS`.

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

import atexit
import contextlib
import os
import sys
import threading
import traceback
from collections.abc import Sequence
from typing import NoReturn

from langchain_answer_metrics.cli.command_options import (
    AlignOptions,
    CalibrateOptions,
    CommandOptions,
    CompareOptions,
    EvaluateOptions,
    SimulateOptions,
    options_of,
)
from langchain_answer_metrics.cli.exits import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_USAGE
from langchain_answer_metrics.cli.interrupts import CTRL_C, exit_now
from langchain_answer_metrics.cli.options import UsageError
from langchain_answer_metrics.cli.parser import EXIT_CODES as EXIT_CODES
from langchain_answer_metrics.cli.parser import build_parser as build_parser

# Each command imports what it runs once its arguments are parsed: ``--help`` and a bad
# argument load no metric, no LangChain Runnable and no LangSmith (tests/test_cli_startup.py).

EXIT_GRACE_SECONDS = 10.0
"""How long the process may take to exit after the run before it is ended anyway (a
thread left blocked by a failure must not keep a CI job hanging)."""

DEBUG_ENV = "ANSWER_METRICS_DEBUG"


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
    options = options_of(args)  # the command's typed options: nothing below reads args
    try:
        return _run_command(options)
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as error:
        if not _is_users_to_fix(error):
            return _internal_error(error)
        from langchain_answer_metrics.cli.output.terminal import for_terminal

        # A config error may list several problems, one per line.
        message = "\n".join(for_terminal(line) for line in str(error).splitlines())
        print(f"answer-metrics: error: {message}", file=sys.stderr)
        return EXIT_USAGE


def _run_command(options: CommandOptions) -> int:
    """The command's entry point (:mod:`~langchain_answer_metrics.cli.commands`), imported
    now that its options are known to be well formed."""
    if isinstance(options, EvaluateOptions) and options.demo:
        from langchain_answer_metrics.cli.commands.demo import run_demo

        return run_demo(options)
    if isinstance(options, EvaluateOptions):
        from langchain_answer_metrics.cli.commands.evaluate import run_evaluate

        return run_evaluate(options)
    if isinstance(options, CalibrateOptions):
        from langchain_answer_metrics.cli.commands.calibrate import run_calibrate

        return run_calibrate(options)
    if isinstance(options, CompareOptions):
        from langchain_answer_metrics.cli.commands.compare import run_compare

        return run_compare(options)
    if isinstance(options, AlignOptions):
        from langchain_answer_metrics.cli.commands.align import run_align

        return run_align(options)
    if isinstance(options, SimulateOptions):
        from langchain_answer_metrics.cli.commands.simulate import run_simulate

        return run_simulate(options)
    from langchain_answer_metrics.cli.commands.toy_judge import run_toy_judge

    return run_toy_judge(options)


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
    from langchain_answer_metrics.cli.output.terminal import for_terminal

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
