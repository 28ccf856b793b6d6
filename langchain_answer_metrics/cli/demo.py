"""``answer-metrics demo``: the bundled English / Russian / Chinese demo set, offline.

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

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from langchain_answer_metrics.cli.exits import EXIT_OK

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

Run = Callable[..., int]


def names_a_judge(args: argparse.Namespace) -> bool:
    """Whether the command line names the judge (a models file, an endpoint, a model)."""
    return bool(args.config or args.base_url or args.model)


def run_demo(args: argparse.Namespace, run: Run) -> int:
    """Score the demo set with ``run`` (the evaluate command's run), against the toy
    judge unless the command line names a judge."""
    from langchain_answer_metrics.cli.datasets import demo_path
    from langchain_answer_metrics.cli.run_checks import chosen_metrics, metric_entries

    data: Path = demo_path()
    entries = metric_entries(args)
    judged = any(
        entries[name].needs_judge for name in chosen_metrics(args.metric, DEMO_METRICS, entries)
    )
    if names_a_judge(args) or not judged:
        return run(args, data, title="demo", default_metrics=DEMO_METRICS)
    from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

    print(TOY_BANNER, file=sys.stderr)
    with LocalOpenAIServer(log_bodies=False) as server:
        args.base_url, args.model = server.base_url, TOY_MODEL
        code = run(args, data, title="demo", default_metrics=DEMO_METRICS)
    if code == EXIT_OK and not args.metric:
        print(DEMO_NEXT, file=sys.stderr)
    return code
