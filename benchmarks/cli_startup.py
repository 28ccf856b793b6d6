"""CPU time of ``answer-metrics --help`` and of its one-line errors, before and after.

Each command runs in a fresh process (``python -m langchain_answer_metrics.cli``), and its
CPU time is the child's user + system time (``resource.getrusage(RUSAGE_CHILDREN)``),
the median of ``--rounds`` runs. "Before" is the tree of ``--before REF`` (a git commit,
default: the main commit before the command imported lazily), exported to a temporary
folder and put first on ``PYTHONPATH``; "after" is this working tree. The two are run
alternately, so the machine's load weighs on both alike.

Run: ``python benchmarks/cli_startup.py [--before REF] [--rounds N]`` (from the repository
root; results in benchmarks/RESULTS.md). ``--rounds 1 --before HEAD`` is the quick check
the test suite runs.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from trees import export_tree

ROOT = Path(__file__).resolve().parent.parent
BEFORE = "b6bae2f"  # main before the lazy command line (issue 30, section 6)

DATA = (
    '{"user_input": "Where?", "response": "Paris.", "reference": "Paris.",'
    ' "retrieved_contexts": ["Paris is the capital."]}\n'
)

COMMANDS: dict[str, list[str]] = {
    "--help": ["--help"],
    "evaluate --help": ["evaluate", "--help"],
    "bad value (--threshold 2)": ["evaluate", "qa.jsonl", "--threshold", "2"],
    "no such data file": ["evaluate", "missing.jsonl", "--metric", "semantic_similarity"],
    "unknown metric": ["evaluate", "qa.jsonl", "--metric", "faithfulnes"],
    "column not in the data": [
        "evaluate",
        "qa.jsonl",
        "--metric",
        "factual_correctness",
        "--reference-col",
        "gold",
    ],
    "no judge configured": ["evaluate", "qa.jsonl", "--metric", "faithfulness"],
}


def cpu_seconds(source: Path, args: list[str], cwd: Path) -> float:
    """The CPU time (user + system) of one ``answer-metrics ARGS`` run from ``source``."""
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env["PYTHONPATH"] = str(source)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, "-m", "langchain_answer_metrics.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 2):
        raise SystemExit(f"{' '.join(args)}: exit {done.returncode}: {done.stderr.strip()}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=BEFORE, help=f"git ref of 'before' (default {BEFORE})")
    parser.add_argument("--rounds", type=int, default=5, help="runs per command and tree")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "qa.jsonl").write_text(DATA, encoding="utf-8")
        trees = {"before": export_tree(args.before, folder), "after": ROOT}
        print(f"CPU seconds (user + sys), median of {args.rounds}; before = {args.before}")
        print("| command | before | after | after / before |")
        print("|---|---|---|---|")
        ratios = []
        for label, command in COMMANDS.items():
            times: dict[str, list[float]] = {"before": [], "after": []}
            for _ in range(args.rounds):
                for name, source in trees.items():
                    times[name].append(cpu_seconds(source, command, folder))
            before, after = (statistics.median(times[name]) for name in ("before", "after"))
            ratios.append(after / before)
            print(f"| `{label}` | {before:.2f} | {after:.2f} | {after / before:.2f} |")
        print(f"largest ratio: {max(ratios):.2f} (target: at most 0.25)")


if __name__ == "__main__":
    main()
