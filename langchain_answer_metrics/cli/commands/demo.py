"""``answer-metrics demo``: the bundled English / Russian / Chinese demo set, offline;
``--compare``: a variant of it scored too, and the two runs compared.

It scores FactualCorrectness and Faithfulness, with every claim and its verdict, and
SemanticSimilarity with the bundled local embedding model. Unless a judge is named on
the command line (``--config``, ``--base-url``, ``--model``), the judged metrics are
judged by the toy judge: the rule-based stand-in of ``answer-metrics toy-judge``
(:mod:`langchain_answer_metrics.testing.heuristic_judge`), served in this process on
127.0.0.1 for the length of the run, said to be a stand-in before and after the scores.
Nothing leaves the machine, and no key is needed.

    answer-metrics demo                                  # the toy judge
    answer-metrics demo --config models.yaml             # your judges, the same samples
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from langchain_answer_metrics.cli.command_options import EvaluateOptions
from langchain_answer_metrics.cli.commands.evaluate import score_file
from langchain_answer_metrics.cli.exits import EXIT_GATE, EXIT_OK
from langchain_answer_metrics.cli.group_options import JudgeOptions

TOY_MODEL = "toy-judge"
"""The toy judge's model id in the demo's tables: a name no price list knows."""

DEMO_METRICS = ["factual_correctness", "faithfulness", "semantic_similarity"]

TOY_BANNER = (
    "judge: the toy judge ('toy-judge'), a rule-based stand-in run in this process: its "
    "verdicts come from word overlap, not understanding, and are NOT real judgments. "
    "Name a real judge with --config models.yaml, or --base-url URL --model ID."
)

DEMO_NEXT = """
Semantic similarity measures meaning and wording, not truth: a wrong date or place can
still score "good" (en-einstein-wrong-place). FactualCorrectness and Faithfulness check
each claim, as listed above. Their judge here was the toy judge, a stand-in; with a real one:
  answer-metrics demo --config models.yaml      (a panel on any providers)
  answer-metrics demo --base-url URL --model ID (any OpenAI-compatible endpoint)
  answer-metrics demo --model gpt-4o-mini       (with OPENAI_API_KEY set)
Your own data:
  answer-metrics evaluate qa.jsonl --metric faithfulness,factual_correctness --report report.html"""


def names_a_judge(judges: JudgeOptions) -> bool:
    """Whether the command line names the judge (a models file, an endpoint, a model)."""
    return bool(judges.config or judges.base_url or judges.model)


def run_demo(options: EvaluateOptions) -> int:
    """Score the demo set as ``evaluate`` does, against the toy judge unless the command
    line names a judge (``--compare``: :func:`run_demo_compare`)."""
    from langchain_answer_metrics.cli.datasets import demo_path
    from langchain_answer_metrics.cli.run_checks import (
        chosen_metrics,
        metric_entries,
        metric_values,
    )

    if options.compare:
        return run_demo_compare(options)
    options = replace(options, data=demo_path())
    entries = metric_entries(options.metrics, options.judges)
    names = chosen_metrics(metric_values(options.metrics), DEMO_METRICS, entries)
    if names_a_judge(options.judges) or not any(entries[name].needs_judge for name in names):
        return score_file(options, title="demo", default_metrics=DEMO_METRICS)
    from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

    print(TOY_BANNER, file=sys.stderr)
    with LocalOpenAIServer(log_bodies=False) as server:
        toy = replace(options.judges, base_url=server.base_url, model=TOY_MODEL)
        code = score_file(replace(options, judges=toy), title="demo", default_metrics=DEMO_METRICS)
    if code == EXIT_OK and not options.metrics.metric and not options.metrics.metric_file:
        print(DEMO_NEXT, file=sys.stderr)
    return code


def run_demo_compare(options: EvaluateOptions) -> int:
    """``answer-metrics demo --compare``: score the bundled demo and a variant of it (some
    answers fixed, some broken) with the same metrics, then compare the two runs. The two
    ``--out`` files go to a temporary folder; ``--report`` is the compare report."""
    from langchain_answer_metrics.analysis.comparison import compare_by_id
    from langchain_answer_metrics.cli.datasets import demo_path
    from langchain_answer_metrics.cli.output.analysis_html import render_compare_html
    from langchain_answer_metrics.cli.output.comparison import print_comparison
    from langchain_answer_metrics.cli.output.files import write_output
    from langchain_answer_metrics.cli.run_on_disk import run_on_disk

    report = options.output.report
    baseline_data = demo_path()
    candidate_data = baseline_data.with_name("demo_candidate.jsonl")
    with tempfile.TemporaryDirectory(prefix="answer-metrics-demo-") as folder:
        outs = {
            "baseline": Path(folder) / "baseline.jsonl",
            "candidate": Path(folder) / "candidate.jsonl",
        }
        for name, data in (("baseline", baseline_data), ("candidate", candidate_data)):
            print(f"\n== {name}: {data.name}", file=sys.stdout)
            output = replace(options.output, out=outs[name], report=None)
            each = replace(options, data=data, output=output, compare=False)
            code = score_file(each, title=f"demo {name}", default_metrics=["semantic_similarity"])
            if code not in (EXIT_OK, EXIT_GATE):
                return code
        print("\n== compare: candidate - baseline", file=sys.stdout)
        with run_on_disk(outs["baseline"]) as baseline, run_on_disk(outs["candidate"]) as candidate:
            result = compare_by_id(baseline, candidate)
    print_comparison(result)
    if report is not None:
        page = render_compare_html(
            result, baseline=baseline_data.name, candidate=candidate_data.name
        )
        write_output(report, "--report", page)
    return EXIT_OK
