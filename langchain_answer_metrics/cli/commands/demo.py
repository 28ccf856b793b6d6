"""``answer-metrics demo``: score the bundled en/ru/zh dataset offline; ``--compare``:
score a variant of it too and compare the two runs.
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from langchain_answer_metrics.cli.command_options import EvaluateOptions
from langchain_answer_metrics.cli.commands.evaluate import score_file
from langchain_answer_metrics.cli.exits import EXIT_GATE, EXIT_OK

DEMO_METRICS = ["semantic_similarity"]

DEMO_NEXT = """
Semantic similarity measures meaning and wording, not truth: a wrong date or place can
still score "good". The LLM-judged metrics check each claim; they need a judge:
  answer-metrics demo --metric factual_correctness,faithfulness --base-url URL --model ID
  (or set OPENAI_API_KEY, or pass --config models.yaml)
  Without a key, try them against a toy judge (its scores are not real judgments):
  answer-metrics toy-judge --port 8011, then --base-url http://127.0.0.1:8011/v1 --model toy
Your own data: answer-metrics evaluate qa.jsonl --metric semantic_similarity --report report.html"""


def run_demo(options: EvaluateOptions) -> int:
    """``demo``: the bundled dataset scored (semantic similarity unless ``--metric``), and
    what to try next."""
    from langchain_answer_metrics.cli.datasets import demo_path

    if options.compare:
        return run_demo_compare(options)
    code = score_file(
        replace(options, data=demo_path()), title="demo", default_metrics=DEMO_METRICS
    )
    if code == EXIT_OK and not options.metrics.metric and not options.metrics.metric_file:
        print(DEMO_NEXT, file=sys.stderr)
    return code


def run_demo_compare(options: EvaluateOptions) -> int:
    """``answer-metrics demo --compare``: score the bundled demo and a variant of it (some
    answers fixed, some broken) with the same metrics, then compare the two runs. The two
    ``--out`` files go to a temporary folder; ``--report`` is the compare report."""
    from langchain_answer_metrics.analysis.comparison import compare
    from langchain_answer_metrics.cli.commands.compare import load_run, print_comparison
    from langchain_answer_metrics.cli.datasets import demo_path
    from langchain_answer_metrics.cli.output.analysis_html import render_compare_html
    from langchain_answer_metrics.cli.output.files import write_output

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
            code = score_file(each, title=f"demo {name}", default_metrics=DEMO_METRICS)
            if code not in (EXIT_OK, EXIT_GATE):
                return code
        print("\n== compare: candidate - baseline", file=sys.stdout)
        result = compare(load_run(outs["baseline"]), load_run(outs["candidate"]))
    print_comparison(result)
    if report is not None:
        page = render_compare_html(
            result, baseline=baseline_data.name, candidate=candidate_data.name
        )
        write_output(report, "--report", page)
    return EXIT_OK
