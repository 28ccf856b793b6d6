"""Peak memory (RSS) and time of ``answer-metrics evaluate --estimate`` against the rows.

Each size runs the command in a child process on a generated JSONL dataset of rows of
about 10 KB (a question, an answer, a reference and retrieved contexts, each row
different), estimating the RAG metrics (Faithfulness, FactualCorrectness, ContextRecall,
ContextPrecision by default), and reads the child's peak resident set size from
``os.wait4``. The estimate sends no request: no server is needed.

    python benchmarks/estimate_memory.py                     # 2,000 and 20,000 rows
    python benchmarks/estimate_memory.py --sizes 200 2000    # quicker

The run passes when the peak at the largest size is at most ``--max-growth`` (1.2) times
the peak at the smallest, and prints the time per row at each size (linear time: the
same per row).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

METRICS = ("faithfulness", "factual_correctness", "context_recall", "context_precision")
TEXT = (
    "the tower was built in paris for the world fair of the year and it stands on the "
    "field of mars near the river where many visitors come each day to see the city"
)
WORDS = TEXT.split(" ")


def sentence(number: int, offset: int, words: int = 14) -> str:
    """A sentence of ``words`` words, different for each ``number`` and ``offset``."""
    picked = [WORDS[(number * 7 + offset * 3 + k) % len(WORDS)] for k in range(words)]
    return " ".join(picked).capitalize() + f" in {1800 + (number + offset) % 200}."


def row(number: int, size: int) -> dict[str, object]:
    """One row of about ``size`` bytes, most of it in the contexts."""
    answer = " ".join(sentence(number, k) for k in range(4))
    reference = " ".join(sentence(number, k + 10) for k in range(3))
    contexts: list[str] = []
    used = len(answer) + len(reference)
    while used < size:
        context = " ".join(sentence(number, len(contexts) * 5 + k) for k in range(8))
        contexts.append(context)
        used += len(context)
    return {
        "id": f"row-{number}",
        "question": f"When was tower number {number} built?",
        "answer": answer,
        "ground_truth": reference,
        "contexts": contexts,
    }


def write_dataset(path: Path, rows: int, size: int) -> None:
    with path.open("w", encoding="utf-8") as file:
        for number in range(rows):
            file.write(json.dumps(row(number, size)) + "\n")


def measure(rows: int, size: int, metrics: tuple[str, ...], folder: Path) -> dict[str, Any]:
    """Run the estimate on ``rows`` rows: its peak RSS (MB), wall time (s), requests."""
    data = folder / f"qa-{rows}.jsonl"
    write_dataset(data, rows, size)
    result = folder / f"estimate-{rows}.json"
    command = [sys.executable, "-m", "langchain_answer_metrics.cli", "evaluate", str(data)]
    command += ["--estimate", "--json", str(result), "--model", "gpt-4o-mini"]
    command += ["--base-url", "http://127.0.0.1:9/v1"]  # never called: nothing is sent
    for metric in metrics:
        command += ["--metric", metric]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LANGSMITH_"))}
    env.update(OPENAI_API_KEY="sk-estimate", LANGSMITH_TRACING="false")
    started = time.perf_counter()
    with (folder / "stdout").open("w+b") as stdout, (folder / "stderr").open("w+b") as stderr:
        child = subprocess.Popen(command, env=env, stdout=stdout, stderr=stderr)
        _, status, usage = os.wait4(child.pid, 0)  # the child's own peak RSS
        elapsed = time.perf_counter() - started
        stdout.seek(0), stderr.seek(0)
        printed, errors = stdout.read().decode(), stderr.read().decode()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"{rows} rows: exit {code}\n{errors[-2000:]}")
    plan = json.loads(result.read_text())
    bytes_per_row = data.stat().st_size / rows
    data.unlink()
    result.unlink()
    return {
        "rows": rows,
        "bytes_per_row": bytes_per_row,
        "peak_rss_mb": usage.ru_maxrss / 1024,
        "seconds": elapsed,
        "requests": plan["total"]["requests"],
        "estimate": printed.splitlines()[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2_000, 20_000])
    parser.add_argument("--row-bytes", type=int, default=10_000, help="about this per row")
    parser.add_argument("--metric", action="append", help="default: " + ", ".join(METRICS))
    parser.add_argument("--max-growth", type=float, default=1.2)
    args = parser.parse_args()
    metrics = tuple(args.metric or METRICS)
    with tempfile.TemporaryDirectory() as folder:
        results = [measure(rows, args.row_bytes, metrics, Path(folder)) for rows in args.sizes]
    print("| rows | bytes/row | requests | peak RSS (MB) | time (s) | ms/row |")
    print("|---:|---:|---:|---:|---:|---:|")
    for item in results:
        print(
            f"| {item['rows']:,} | {item['bytes_per_row']:,.0f} | {item['requests']:,} "
            f"| {item['peak_rss_mb']:.0f} | {item['seconds']:.1f} "
            f"| {1000 * item['seconds'] / item['rows']:.1f} |"
        )
    smallest, largest = results[0], results[-1]
    growth = largest["peak_rss_mb"] / smallest["peak_rss_mb"]
    time_ratio = largest["seconds"] / smallest["seconds"]
    rows_ratio = largest["rows"] / smallest["rows"]
    print(
        f"\npeak RSS at {largest['rows']:,} rows / at {smallest['rows']:,} rows: {growth:.2f}x "
        f"(target at most {args.max_growth}x); time {time_ratio:.1f}x for {rows_ratio:.0f}x "
        "the rows"
    )
    if growth > args.max_growth:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
