"""``answer-metrics compare A B --judge pairwise``: the two runs' responses judged side by side.

    answer-metrics compare baseline.jsonl candidate.jsonl --judge pairwise \\
        --config judges.yaml --criterion "The more helpful answer." --max-requests 500

Each id both ``--out`` files hold is a pair (the baseline's response as A, the candidate's
as B) that :class:`~langchain_answer_metrics.metrics.pairwise.PairwisePreference` judges
in both orders with every judge of ``--config`` (or ``--base-url``/``--model``, or
``OPENAI_API_KEY``). The pairs stream through the runner under the package's limits:
``--max-cost``, ``--max-requests``, the circuit breaker (``--max-consecutive-failures``,
else the config's) and each model's deadline from the config; ``--estimate`` sends no
request. Printed: the candidate's wins, losses and ties, its win rate with a bootstrap
95% CI, the share of position-biased pairs per judge, and the pairs where the judges'
preference goes against a metric's score difference
(:mod:`langchain_answer_metrics.analysis.pairwise` computes them).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from langchain_answer_metrics.analysis.pairwise import (
    PairwiseReport,
    pairs_by_id,
    pairwise_report,
)
from langchain_answer_metrics.cli.command_options import CompareOptions
from langchain_answer_metrics.cli.group_options import JudgeOptions
from langchain_answer_metrics.cli.limits import RunLimits, run_limits
from langchain_answer_metrics.cli.options import UsageError
from langchain_answer_metrics.cli.output.comparison import print_pairwise
from langchain_answer_metrics.cli.output.printing import ProgressBar
from langchain_answer_metrics.cli.output.spend_view import spend_lines, spend_of
from langchain_answer_metrics.cli.plans import NO_JUDGE, MetricPlan, MetricPlans, judge_panel
from langchain_answer_metrics.metrics.explain import counted
from langchain_answer_metrics.metrics.pairwise import PairwisePreference
from langchain_answer_metrics.run.estimate.estimator import estimate
from langchain_answer_metrics.run.runner import Progress, stream_evaluate


def check_judge_options(options: CompareOptions) -> None:
    """Refuse a judge option given without ``--judge``."""
    if options.judge is not None:
        return
    given = {
        "--criterion": options.criterion is not None,
        **{
            f"--{name.replace('_', '-')}": value is not None
            for name, value in vars(options.judges).items()
        },
        "--max-cost": options.limits.max_cost is not None,
        "--max-requests": options.limits.max_requests is not None,
        "--max-consecutive-failures": options.limits.max_consecutive_failures is not None,
        "--estimate": options.estimate,
    }
    flags = [flag for flag, present in given.items() if present]
    if flags:
        raise UsageError(f"{flags[0]} goes with --judge pairwise (it sets up the judges)")


def judge_plans(judges: JudgeOptions, criterion: str | None) -> MetricPlans:
    """The pairwise metric (on ``criterion``) with the judges ``judges`` names, refused
    before any output or request when no judge is configured."""
    panel = judge_panel(judges, needs_judge=True)
    members = list(panel.judges) if panel is not None else []
    if not members:
        if panel is None:
            raise UsageError(NO_JUDGE.format(metrics="--judge pairwise"))
        raise UsageError(f"{judges.config}: lists no chat_models, but --judge pairwise needs one")
    try:
        metric = PairwisePreference(llm=members, criterion=criterion)
    except ValueError as error:
        raise UsageError(str(error).splitlines()[-1]) from None
    plans = MetricPlans([MetricPlan(metric, "")])
    plans.panel = panel
    return plans


def judge_pairs(
    options: CompareOptions,
    plans: MetricPlans,
    baseline: Mapping[str, Any],
    candidate: Mapping[str, Any],
    stream: TextIO | None = None,
) -> tuple[PairwiseReport | None, bool]:
    """Judge the pairs of the two runs (their rows by id) and print the report;
    ``(None, False)`` after an estimate. The flag says whether a limit stopped the judging early."""
    stream = stream or sys.stdout
    metric = plans[0].metric
    pairs = pairs_by_id(baseline, candidate)
    samples = [pair.sample for pair in pairs.pairs]
    limits = run_limits(options.limits, plans)
    concurrency = options.limits.max_concurrency
    if options.estimate:
        from langchain_answer_metrics.cli.estimate import print_estimate

        prices = dict(getattr(plans.panel, "prices", None) or {})
        print_estimate(
            estimate(samples, [metric], prices=prices or None, max_concurrency=concurrency),
            stream,
        )
        return None, False
    outcomes, spent = _judge(samples, metric, limits, concurrency=concurrency, quiet=options.quiet)
    report = pairwise_report(pairs, outcomes)
    labels = [judge.label for judge in getattr(metric, "llm", ())]
    print_pairwise(report, pairs, labels, stream)
    print(
        "\n".join(spend_lines(spend_of(spent, limits.pricing), "spend (judging)")), file=sys.stderr
    )
    if limits.stop is not None:
        print(
            f"answer-metrics: stopped early: {limits.stop.message}; "
            f"{counted(limits.not_run, 'pair')} not judged",
            file=sys.stderr,
        )
    return report, limits.stop is not None


def _judge(
    samples: Sequence[Any], metric: Any, limits: RunLimits, *, concurrency: int, quiet: bool
) -> tuple[list[object | None], list[Any]]:
    """Each pair's outcome (None: not judged, a limit), and the results to price."""
    bar = ProgressBar(len(samples), enabled=not quiet)
    outcomes: list[object | None] = []
    spent: list[Any] = []

    def progress(state: Progress) -> None:
        bar(state)

    try:
        for row in stream_evaluate(
            samples,
            [metric],
            max_concurrency=concurrency,
            on_progress=progress,
            **limits.left(),
        ):
            limits.count(row)
            outcomes.append(None if row.not_run else row.results[metric.key])
            if not row.not_run:
                spent.append(row.results)
    finally:
        bar.close()
    return outcomes, spent
