"""Peak memory (RSS) of the ``answer-metrics evaluate`` (or ``calibrate``, or ``compare``)
command against the dataset's length.

Each size runs the command in a child process on a generated JSONL dataset, scoring
SemanticSimilarity with ``--out``, ``--report`` and ``--summary-json`` (every output the
command keeps; ``--command calibrate``: every row labelled, ``--json`` for the summary;
``--command compare``: two generated ``--out`` files of that many samples, two metrics
each, compared with ``--json`` and ``--report``, no model involved), and reads the child's
peak resident set size from ``os.wait4``. The
embeddings come from the local OpenAI-compatible test server in its own process
(:mod:`benchmarks.server_process`, no latency), so the numbers are the command's own
memory, not a model's; ``--local`` uses the bundled local embedding model instead (slow
on a small machine at 100k rows).

    python benchmarks/cli_memory.py                      # 1k, 10k and 100k rows
    python benchmarks/cli_memory.py --sizes 1000 10000 --local
    python benchmarks/cli_memory.py --command calibrate --sizes 1000 10000 100000
    python benchmarks/cli_memory.py --command compare

The run passes when the peak at the largest size is at most ``--max-growth`` (1.3) times
the peak at the size ten times smaller.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))

from server_process import ServerProcess

SENTENCE = "the capital of france is paris a city on the seine known for art food and history"
WORDS = SENTENCE.split(" ")


def write_dataset(path: Path, rows: int) -> None:
    """``rows`` short question/answer/reference rows, each a little different."""
    with path.open("w", encoding="utf-8") as file:
        for number in range(rows):
            words = [WORDS[(number * 7 + k) % len(WORDS)] for k in range(12)]
            file.write(
                json.dumps(
                    {
                        "id": f"row-{number}",
                        "question": f"Question {number}?",
                        "answer": " ".join(words),
                        "ground_truth": " ".join(reversed(words)),
                        "human": number % 3 != 0,  # calibrate's label
                    }
                )
                + "\n"
            )


def write_run(path: Path, rows: int, *, shift: int) -> None:
    """An ``--out`` file of ``rows`` samples, each with two metrics' scores and reasons
    (``shift`` moves the scores: a second run of the same dataset)."""
    with path.open("w", encoding="utf-8") as file:
        for number in range(rows):
            words = [WORDS[(number * 7 + k) % len(WORDS)] for k in range(12)]
            metrics = {
                key: {
                    "kind": key,
                    "score": ((number * 13 + shift * k) % 11) / 10,
                    "reason": f"{key} of row {number}: {' '.join(words)}",
                    "per_model": {"judge-a": 0.5},
                    "error": None,
                }
                for k, key in enumerate(("faithfulness", "has_year"), start=1)
            }
            record = {
                "schema_version": 2,
                "id": f"row-{number}",
                "fingerprint": f"{number:016x}",
                "user_input": f"Question {number}?",
                "response": " ".join(words[shift % 3 :]),
                "reference": " ".join(reversed(words)),
                "retrieved_contexts": None,
                "metrics": metrics,
            }
            file.write(json.dumps(record) + "\n")


def command_line(
    name: str, rows: int, base_url: str | None, folder: Path
) -> tuple[list[str], list[Path]]:
    """The command ``name`` on ``rows`` rows (its input written), and the files it reads
    and writes; the summary it writes is the last."""
    command = [sys.executable, "-m", "langchain_answer_metrics.cli", name]
    files = ("out.jsonl", "r.html", "s.json")
    out, report, summary = (folder / f"{part}-{rows}" for part in files)
    if name == "compare":
        baseline, candidate = folder / f"a-{rows}.jsonl", folder / f"b-{rows}.jsonl"
        write_run(baseline, rows, shift=0)
        write_run(candidate, rows, shift=1)
        command += [str(baseline), str(candidate), "--json", str(summary)]
        return [*command, "--report", str(report)], [baseline, candidate, report, summary]
    data = folder / f"qa-{rows}.jsonl"
    write_dataset(data, rows)
    command += [str(data), "--metric", "semantic_similarity", "--quiet", "--out", str(out)]
    command += ["--report", str(report)]
    if name == "calibrate":
        command += ["--label-col", "human", "--json", str(summary)]
    else:
        command += ["--summary-json", str(summary)]
    if base_url is not None:
        command += ["--base-url", base_url, "--embedding-model", "embed-a"]
    return command, [data, out, report, summary]


def measure(
    rows: int, base_url: str | None, folder: Path, *, name: str = "evaluate"
) -> dict[str, float]:
    """Run the command ``name`` on ``rows`` rows; its peak RSS (MB), wall time (s)."""
    command, files = command_line(name, rows, base_url, folder)
    summary = files[-1]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LANGSMITH_"))}
    env.update(LANGSMITH_TRACING="false", LANGSMITH_TEST_TRACKING="false")
    if base_url is not None:
        env["OPENAI_API_KEY"] = "sk-test"
    started = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert child.stderr is not None
    stderr = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.perf_counter() - started
    if child.returncode != 0:
        raise SystemExit(f"{rows} rows: exit {child.returncode}\n{stderr.decode()[-2000:]}")
    written = json.loads(summary.read_text())
    if name == "calibrate":
        scored = written["semantic_similarity"]["aggregate"]["n"]["value"]
    elif name == "compare":
        scored = written["faithfulness"]["n_paired"]
    else:
        scored = written["scored"]
    assert scored == rows, (scored, rows)
    for path in files:
        path.unlink(missing_ok=True)
    return {"rows": rows, "peak_rss_mb": usage.ru_maxrss / 1024, "seconds": elapsed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--local", action="store_true", help="the bundled embedding model")
    parser.add_argument("--max-growth", type=float, default=1.3)
    parser.add_argument(
        "--command", choices=["evaluate", "calibrate", "compare"], default="evaluate"
    )
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as folder:
        if args.local or args.command == "compare":  # compare needs no model
            results = [measure(rows, None, Path(folder), name=args.command) for rows in args.sizes]
        else:
            with ServerProcess(latency=0.0) as server:
                results = [
                    measure(rows, server.base_url, Path(folder), name=args.command)
                    for rows in args.sizes
                ]
    print("| rows | peak RSS (MB) | wall time (s) |\n|---:|---:|---:|")
    for item in results:
        print(f"| {item['rows']:,} | {item['peak_rss_mb']:.0f} | {item['seconds']:.1f} |")
    by_size = {item["rows"]: item["peak_rss_mb"] for item in results}
    largest = max(by_size)
    if largest // 10 in by_size:
        growth = by_size[largest] / by_size[largest // 10]
        print(
            f"\npeak RSS at {largest:,} rows / at {largest // 10:,} rows: {growth:.2f}x "
            f"(target at most {args.max_growth}x)"
        )
        if growth > args.max_growth:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
