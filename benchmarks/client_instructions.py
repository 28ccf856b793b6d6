"""Client instructions per sample of the five-metric suite, this tree against an older one.

``run_benchmark.py`` measures the client's CPU time per sample; on this 2-core machine two
runs of the same code spread by up to 20 %, even with nothing else running, which is too
wide to tell a 5 % change (issue 32: "the client CPU per sample in benchmarks/ is within
5 %"). This script counts the instructions the client executes instead, under valgrind's
cachegrind, which load, frequency and the other process do not move: two runs of the same
code agree within 0.1 %.

Each tree (this one, and ``--before REF`` exported with ``git archive``) runs the
zero-latency suite of ``run_benchmark.py`` (FactualCorrectness, AnswerCorrectness,
Faithfulness, SemanticSimilarity, AspectCritic; ChatOpenAI and OpenAIEmbeddings over HTTP)
in a child interpreter under cachegrind, twice: the warm-up alone, then the warm-up and
``--samples`` samples. The difference, divided by the samples, is the instructions per
sample; set-up, imports and warm-up cancel out. Both trees' clients talk to one server
process of this tree (outside valgrind), so they are answered by the same judge.

Run from the repository root (each child takes a minute or more per 100 samples)::

    python benchmarks/client_instructions.py --before b6bae2f --samples 300 --strictness 1 3

Nothing is asserted; the figures go to ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

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
    if samples:
        rows = evaluate_dataset(measured, metrics, max_concurrency=CONCURRENCY)
    errors = sum(len(row.errors) for row in rows)
    print(json.dumps({"rows": len(rows), "errors": errors}))


def export(ref: str, folder: Path) -> Path:
    """The package and benchmarks of ``ref``, extracted under ``folder``."""
    archive = folder / "before.tar"
    subprocess.run(
        ["git", "-C", str(ROOT), "archive", "-o", str(archive), ref, *EXPORTED],
        check=True,
    )
    with tarfile.open(archive) as tar:
        tar.extractall(folder / "before", filter="data")
    return folder / "before"


def instructions(tree: Path, base_url: str, strictness: int, samples: int, out: Path) -> int:
    """Instructions the client of ``tree`` executes, warm-up and ``samples`` samples."""
    command = [
        "valgrind",
        "--tool=cachegrind",
        "--cache-sim=no",
        f"--cachegrind-out-file={out}",
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        base_url,
        str(strictness),
        str(samples),
    ]
    environment = {**os.environ, "PYTHONPATH": str(tree), "PYTHONHASHSEED": "0"}
    done = subprocess.run(
        command, cwd=tree / "benchmarks", env=environment, capture_output=True, text=True
    )
    if done.returncode:
        raise RuntimeError(f"the child for {tree} failed:\n{done.stderr[-3000:]}")
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    if outcome["errors"]:
        raise RuntimeError(f"the child for {tree} scored with {outcome['errors']} errors")
    found = _SUMMARY.search(out.read_text())
    if found is None:
        raise RuntimeError(f"no instruction count in {out}")
    return int(found.group(1))


def per_sample(tree: Path, base_url: str, strictness: int, samples: int, folder: Path) -> float:
    warm = instructions(tree, base_url, strictness, 0, folder / "warm.out")
    total = instructions(tree, base_url, strictness, samples, folder / "total.out")
    return (total - warm) / samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", default="b6bae2f", help="git ref of 'before'")
    parser.add_argument("--samples", type=int, default=300)
    parser.add_argument("--strictness", type=int, nargs="+", default=[1, 3])
    parser.add_argument("--child", nargs=3, metavar=("BASE_URL", "STRICTNESS", "SAMPLES"))
    args = parser.parse_args()
    if args.child:
        base_url, strictness, samples = args.child
        child(base_url, int(strictness), int(samples))
        return
    if shutil.which("valgrind") is None:
        sys.exit("client_instructions.py needs valgrind (apt-get install valgrind)")
    from server_process import ServerProcess

    with tempfile.TemporaryDirectory() as scratch, ServerProcess(latency=0.0) as server:
        folder = Path(scratch)
        trees = {"before": export(args.before, folder), "after": ROOT}
        print(f"instructions per sample (millions), {args.samples} samples; before = {args.before}")
        print("| strictness | before | after | after / before |")
        print("|---|---|---|---|")
        for strictness in args.strictness:
            counts: dict[str, Any] = {
                name: per_sample(tree, server.base_url, strictness, args.samples, folder)
                for name, tree in trees.items()
            }
            before, after = counts["before"] / 1e6, counts["after"] / 1e6
            print(
                f"| {strictness} | {before:.2f} | {after:.2f} | {after / before:.3f} |", flush=True
            )


if __name__ == "__main__":
    main()
