"""After a scoring run (``evaluate``, ``demo``): the summary and spend printed, ``--report``
and ``--summary-json`` written, and the exit code, saying why when it is not 0.

The records are read back from ``--out`` (:meth:`~.resume.RecordStore.in_order`) at each
pass, never held: the summary, the report and the outcome counts each read them once.
Statistics come from :mod:`langchain_answer_metrics.run.summary` (through
:mod:`langchain_answer_metrics.cli.records`).
"""

from __future__ import annotations

import sys

import langchain_answer_metrics.cli.batch as batch_mode
from langchain_answer_metrics.cli.command_options import EvaluateOptions
from langchain_answer_metrics.cli.exits import EXIT_ERRORS, EXIT_GATE, EXIT_OK, EXIT_STOPPED
from langchain_answer_metrics.cli.group_options import OutputOptions
from langchain_answer_metrics.cli.interrupts import CTRL_C
from langchain_answer_metrics.cli.limits import RunLimits
from langchain_answer_metrics.cli.outcomes import gate, outcomes
from langchain_answer_metrics.cli.output.html_report import write_report
from langchain_answer_metrics.cli.output.printing import print_summary
from langchain_answer_metrics.cli.output.spend_view import spend_lines, spend_of
from langchain_answer_metrics.cli.output.summary_json import write_summary_json
from langchain_answer_metrics.cli.plans import MetricPlans
from langchain_answer_metrics.cli.preflight import spent_by_check
from langchain_answer_metrics.cli.records import overview
from langchain_answer_metrics.cli.resume import RecordStore, ResumePlan
from langchain_answer_metrics.cli.run_checks import CheckedRun
from langchain_answer_metrics.metrics.explain import counted

__all__ = ["report_run"]


def report_run(
    options: EvaluateOptions,
    checked: CheckedRun,
    plan: ResumePlan,
    plans: MetricPlans,
    store: RecordStore,
    limits: RunLimits,
) -> int:
    """Summarise, write the report and the summary JSON, gate: the exit code."""
    assert options.data is not None
    output, keys, gates = options.output, checked.keys, checked.gates
    # A metric's own threshold (a judge declared in --config) unless --threshold gives one.
    own = {p.metric.key: p.metric.threshold for p in plans if p.metric.threshold is not None}
    thresholds = {**own, **checked.thresholds}
    final = store.in_order(checked.rows)  # the run's records, read back from disk at each call
    overviews = overview(final(), keys, thresholds)
    spend = spend_of(store.spent(), limits.pricing)
    print_summary(overviews, final(), gates, every_sample=options.demo)
    if not output.quiet:  # the summary table and errors only
        print("\n".join(spend_lines(spend, "spend (this run)")), file=sys.stderr)
    if output.report is not None:
        write_report(
            output.report,
            final,
            overviews,
            options.data,
            gates,
            limits.pricing,
            checks=spent_by_check(store.spent()),
        )
    if output.out is not None:
        print(f"per-sample results: {output.out}", file=sys.stderr)
    scored, failed, degraded = outcomes(final(), keys)
    code = _exit_code(gate(overviews, gates), failed, limits, output)
    if output.summary_json is not None:
        write_summary_json(
            output.summary_json,
            data=options.data,
            samples=plan.rows,
            scored=scored,
            failed=failed,
            degraded=degraded,
            limits=limits,
            overviews=overviews,
            spent=store.spent(),
            spend=spend,
            exit_code=code,
        )
    return code


def _exit_code(gate_failed: bool, failed: int, limits: RunLimits, output: OutputOptions) -> int:
    """The run's exit code, saying why when it is not 0: a gate, a stop, metric errors."""
    code = EXIT_GATE if gate_failed else EXIT_OK
    if limits.stop is not None:
        resume = (
            f"rerun the same command to continue from {output.out}"
            if output.out is not None
            else "pass --out FILE to keep results and continue later"
        )
        print(
            f"answer-metrics: stopped early: {limits.stop.message}; "
            f"{counted(limits.not_run, 'sample')} not run ({resume})",
            file=sys.stderr,
        )
        code = code or batch_mode.batch_stop_code(limits.stop) or EXIT_STOPPED
    if code == EXIT_OK and failed and not output.allow_errors:
        print(
            f"answer-metrics: {counted(failed, 'sample')} {'has' if failed == 1 else 'have'} "
            "metric errors (--allow-errors to exit 0 anyway)",
            file=sys.stderr,
        )
        code = EXIT_ERRORS
    return CTRL_C.exit_code(code)  # pressed while the summary or the report was written
