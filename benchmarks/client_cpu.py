"""Client CPU per sample of the five-metric suite, this tree against an older one.

``run_benchmark.py`` measures the client's CPU time per sample; on this 2-core machine two
runs of the same code spread by up to 20 %, even with nothing else running, which is too
wide to tell a 5 % change (issue 32: "the client CPU per sample in benchmarks/ is within
5 %"). So this script measures it two ways, in child interpreters that each run
``run_benchmark.py``'s zero-latency suite (FactualCorrectness, AnswerCorrectness,
Faithfulness, SemanticSimilarity, AspectCritic; ChatOpenAI and OpenAIEmbeddings over HTTP)
from one tree: this one, or ``--before REF`` exported with ``git archive``. Both trees'
clients talk to one server process of this tree, so they are answered by the same judge.

- **Instructions** (default): the instructions the client executes, counted by valgrind's
  cachegrind, which load, frequency and the other process do not move (two runs of one
  tree agree within 0.3 %). Each child runs twice: the warm-up alone, then the warm-up
  and ``--samples`` samples; the difference over the samples is the instructions per
  sample (imports, set-up and warm-up cancel out). It leaves out the kernel's time and
  the cost of cache misses.
- **Time** (``--timed RUNS``): ``time.process_time`` of the measured run, user and system,
  all threads, in ``RUNS`` children per tree without valgrind, in the order
  before-after-after-before repeated, each ``before`` paired with its neighbouring
  ``after``; the median per tree and the median and mean of the paired ratios.

Run from the repository root (under valgrind a child takes a minute or more per 100
samples)::

    python benchmarks/client_cpu.py --before b6bae2f --samples 300 --strictness 1 3
    python benchmarks/client_cpu.py --before b6bae2f --samples 300 --timed 8

Nothing is asserted; the figures go to ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from trees import export_tree

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
EXPORTED = ("langchain_answer_metrics", "benchmarks")
WARM_SAMPLES = 32
CONCURRENCY = 8
_SUMMARY = re.compile(r"^summary:\s+(\d+)", re.MULTILINE)


def child(base_url: str, strictness: int, samples: int) -> None:
    """Run in a tree's ``benchmarks/`` folder, with that tree's package first on the path."""
    sys.path.insert(0, os.getcwd())
    import run_benchmark as tree  # this tree's models, suite and samples

    from langchain_answer_metrics import evaluate_dataset

    metrics = tree.suite(tree.chat_model(base_url), tree.embedding_model(base_url), strictness)
    warm = list(tree.synthetic_samples(WARM_SAMPLES, start=10**6))
    measured = list(tree.synthetic_samples(samples))
    rows = evaluate_dataset(warm, metrics, max_concurrency=CONCURRENCY)
    cpu = time.process_time()
    if samples:
        rows = evaluate_dataset(measured, metrics, max_concurrency=CONCURRENCY)
    cpu = time.process_time() - cpu
    errors = sum(len(row.errors) for row in rows)
    print(json.dumps({"rows": len(rows), "errors": errors, "cpu_seconds": cpu}))


def run_child(tree: Path, base_url: str, strictness: int, samples: int, prefix: list[str]) -> Any:
    """What the child of ``tree`` reports (its rows, errors and measured CPU seconds)."""
    command = [*prefix, sys.executable, str(Path(__file__).resolve()), "--child"]
    command += [base_url, str(strictness), str(samples)]
    environment = {**os.environ, "PYTHONPATH": str(tree), "PYTHONHASHSEED": "0"}
    done = subprocess.run(
        command, cwd=tree / "benchmarks", env=environment, capture_output=True, text=True
    )
    if done.returncode:
        raise RuntimeError(f"the child for {tree} failed:\n{done.stderr[-3000:]}")
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    if outcome["errors"]:
        raise RuntimeError(f"the child for {tree} scored with {outcome['errors']} errors")
    return outcome


def instructions(tree: Path, base_url: str, strictness: int, samples: int, out: Path) -> int:
    """Instructions the client of ``tree`` executes, warm-up and ``samples`` samples."""
    cachegrind = ["valgrind", "--tool=cachegrind", "--cache-sim=no"]
    run_child(tree, base_url, strictness, samples, [*cachegrind, f"--cachegrind-out-file={out}"])
    found = _SUMMARY.search(out.read_text())
    if found is None:
        raise RuntimeError(f"no instruction count in {out}")
    return int(found.group(1))


def instructions_per_sample(
    tree: Path, base_url: str, strictness: int, samples: int, folder: Path
) -> float:
    warm = instructions(tree, base_url, strictness, 0, folder / "warm.out")
    total = instructions(tree, base_url, strictness, samples, folder / "total.out")
    return (total - warm) / samples


def compare_instructions(trees: dict[str, Path], base_url: str, args: argparse.Namespace) -> None:
    if shutil.which("valgrind") is None:
        sys.exit("counting instructions needs valgrind (apt-get install valgrind)")
    print(f"instructions per sample (millions), {args.samples} samples; before = {args.before}")
    print("| strictness | before | after | after / before |")
    print("|---|---|---|---|")
    for strictness in args.strictness:
        counts = {
            name: instructions_per_sample(tree, base_url, strictness, args.samples, args.folder)
            for name, tree in trees.items()
        }
        before, after = counts["before"] / 1e6, counts["after"] / 1e6
        print(f"| {strictness} | {before:.2f} | {after:.2f} | {after / before:.3f} |", flush=True)


def compare_times(trees: dict[str, Path], base_url: str, args: argparse.Namespace) -> None:
    order = ["before", "after", "after", "before"] * ((args.timed + 1) // 2)
    order = order[: 2 * args.timed]
    print(f"client CPU per sample (ms), {args.samples} samples; before = {args.before}")
    print("| strictness | before (median) | after (median) | paired ratios | median (mean) |")
    print("|---|---|---|---|---|")
    for strictness in args.strictness:
        runs: dict[str, list[float]] = {"before": [], "after": []}
        for name in order:
            outcome = run_child(trees[name], base_url, strictness, args.samples, [])
            runs[name].append(1000 * outcome["cpu_seconds"] / args.samples)
        ratios = [after / before for before, after in zip(runs["before"], runs["after"])]
        print(
            f"| {strictness} | {statistics.median(runs['before']):.2f} "
            f"| {statistics.median(runs['after']):.2f} "
            f"| {', '.join(f'{ratio:.2f}' for ratio in ratios)} "
            f"| **{statistics.median(ratios):.3f}** ({statistics.mean(ratios):.3f}) |",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", default="b6bae2f", help="git ref of 'before'")
    parser.add_argument("--samples", type=int, default=300)
    parser.add_argument("--strictness", type=int, nargs="+", default=[1, 3])
    parser.add_argument(
        "--timed", type=int, metavar="RUNS", help="CPU time over RUNS runs per tree instead"
    )
    parser.add_argument("--child", nargs=3, metavar=("BASE_URL", "STRICTNESS", "SAMPLES"))
    args = parser.parse_args()
    if args.child:
        base_url, strictness, samples = args.child
        child(base_url, int(strictness), int(samples))
        return
    from server_process import ServerProcess

    with tempfile.TemporaryDirectory() as scratch, ServerProcess(latency=0.0) as server:
        args.folder = Path(scratch)
        trees = {"before": export_tree(args.before, args.folder, EXPORTED), "after": ROOT}
        if args.timed:
            compare_times(trees, server.base_url, args)
        else:
            compare_instructions(trees, server.base_url, args)


if __name__ == "__main__":
    main()
