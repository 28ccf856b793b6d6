"""One scoring run of ``evaluate`` or ``demo``, from its typed options
(:class:`~langchain_answer_metrics.cli.command_options.EvaluateOptions`) and checked rows
to an exit code.

The metrics and their models are built from the options
(:mod:`langchain_answer_metrics.cli.plans`), the rows still to score are planned against
``--out`` (resume: :func:`~langchain_answer_metrics.run.records.plan.plan_resume`), each
judge is checked before a large run (:mod:`~langchain_answer_metrics.cli.preflight`),
then the rows are streamed through the runner and each record appended to ``--out`` as
it arrives (:mod:`~langchain_answer_metrics.cli.scoring`, ``calibrate``'s path too).
What follows the run, the summary, report and exit code, is
:mod:`~langchain_answer_metrics.cli.run_report`'s. Rows are read from the dataset as they
are needed and records read back from ``--out``: memory stays flat however many rows the
dataset has.
"""

from __future__ import annotations

import sys

import langchain_answer_metrics.cli.batch as batch_mode
from langchain_answer_metrics.cli.command_options import EvaluateOptions
from langchain_answer_metrics.cli.estimate import run_estimate
from langchain_answer_metrics.cli.exits import EXIT_INTERRUPTED
from langchain_answer_metrics.cli.interrupts import CTRL_C
from langchain_answer_metrics.cli.limits import count_sent, run_limits
from langchain_answer_metrics.cli.out_lock import out_locked
from langchain_answer_metrics.cli.output.printing import for_terminal
from langchain_answer_metrics.cli.plans import MetricPlans, build_metrics
from langchain_answer_metrics.cli.preflight import PREFLIGHT, preflight, spent_by_check
from langchain_answer_metrics.cli.resume import (
    RecordStore,
    ResumePlan,
    SavedRecords,
    Spent,
    plan_resume,
)
from langchain_answer_metrics.cli.run_checks import CheckedRun
from langchain_answer_metrics.cli.run_report import report_run
from langchain_answer_metrics.cli.scoring import record_store, say_resuming, score_plan
from langchain_answer_metrics.cli.streaming import StreamSettings
from langchain_answer_metrics.metrics.explain import counted

__all__ = ["run_checked"]


def run_checked(options: EvaluateOptions, checked: CheckedRun, *, title: str) -> int:
    """Score ``options.data`` once :func:`~.run_checks.check_run` found nothing wrong with
    the options and data: plan the resume, stream, write, summarise, gate."""
    CTRL_C.starting_run()
    with out_locked(None if options.estimate else options.output.out):
        return _run_checked(options, checked, title=title)


def _run_checked(options: EvaluateOptions, checked: CheckedRun, *, title: str) -> int:
    assert options.data is not None
    out, rows = options.output.out, checked.rows
    plans = build_metrics(checked.names, metrics=options.metrics, judges=options.judges)
    CTRL_C.check()
    if options.batch.batch_cancel:
        return batch_mode.cancel_batches(out, [p.metric for p in plans])
    saved = SavedRecords.load(out, options.data)
    plan = plan_resume(
        rows,
        saved.lookup,
        {p.metric.key: p.signature for p in plans},
        keep_degraded=options.output.keep_degraded,
    )
    print(
        for_terminal(
            f"{title}: {counted(plan.rows, 'sample')}, metrics: {', '.join(checked.keys)}"
        ),
        file=sys.stderr,
    )
    say_resuming(plan, plans, out)
    if options.estimate:  # sends no request
        groups = {m: plan.rows_of(rows, m) for m in plan.groups}
        return run_estimate(
            groups,
            plans,
            path=options.estimate_json,
            max_concurrency=options.limits.max_concurrency,
            batch_embeddings=options.batch.batch_embeddings,
        )
    # each judge answers once before a large run
    check_spent = preflight(plans, plan.pending, enabled=options.limits.preflight)
    with record_store(out, saved) as store:
        if check_spent:  # the check's requests are this run's too, in its spend and report
            store.add_spent({PREFLIGHT: Spent(check_spent)})
        return _run_and_report(options, checked, plan, plans, saved, store)


def _run_and_report(
    options: EvaluateOptions,
    checked: CheckedRun,
    plan: ResumePlan,
    plans: MetricPlans,
    saved: SavedRecords,
    store: RecordStore,
) -> int:
    """Score what ``plan`` lacks into ``store``, then summarise, report and gate."""
    rows = checked.rows
    pending = [(missing, plan.rows_of(rows, missing)) for missing in plan.groups]
    batch = batch_mode.settle_batch_mode(options.batch, [each.metric for each in plans], pending)
    limits = run_limits(options.limits, plans, batch=batch.batch, embeddings=batch.batch_embeddings)
    # The judges' check was sent before the samples: within --max-requests and --max-cost.
    for check in spent_by_check(store.spent()):
        count_sent(limits, check)
    out, quiet = options.output.out, options.output.quiet
    settings = StreamSettings(
        max_concurrency=options.limits.max_concurrency,
        quiet=quiet,
        batch=batch_mode.batch_options(batch, out=out, quiet=quiet, pricing=limits.pricing),
    )
    if not score_plan(store, plan, rows, plans, saved, settings, limits, batch=batch):
        return EXIT_INTERRUPTED
    return report_run(options, checked, plan, plans, store, limits)
