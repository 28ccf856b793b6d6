"""The run's fixed cost (issue 32): a short run's wall time as a ratio to its bound.

Run from the repository root::

    python benchmarks/fixed_cost.py               # 3 runs of each case, 1 s latency
    python benchmarks/fixed_cost.py --runs 5 --latency 0.2

Two cases, each through the runner (``evaluate``) against the local server in its own
process at a fixed latency, each run in a fresh interpreter (the models are built before
the clock starts, as a script builds them before its run):

- **embeddings**: SemanticSimilarity over 150 samples, whose 300 texts go out as three
  embedding requests together (batches of 128); the bound is one latency;
- **factual**: FactualCorrectness (F1) over 4 samples at ``max_concurrency=8``: 8
  decompositions, then 8 verifications; the bound is two latencies.

Each interpreter then runs its case a second time on fresh samples ("warm"): the first
run pays what a process pays once (lazy imports, the first HTTP client's pool).

The server stamps each request's arrival and answer on the system-wide monotonic clock,
so the time is split into: before the first request arrives (set-up, validation,
read-ahead, the first request's preparation), the spread of the first round's arrivals
(requests prepared one after the other), and after the last answer (the last replies
read, scores, results). Nothing is asserted; the numbers go to ``benchmarks/RESULTS.md``.

On a shared machine the other processes' load stretches every wall time; as root,
``chrt -f 10 python benchmarks/fixed_cost.py`` gives the client and the server (its child)
the cores as soon as they are ready to run, as a quiet machine would.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

CASES = {
    # case: (samples, max_concurrency, depth of dependent requests)
    "embeddings": (150, 8, 1),
    "factual": (4, 8, 2),
}


def _samples(case: str, start: int) -> list[dict[str, Any]]:
    from run_benchmark import synthetic_samples

    count = CASES[case][0]
    rows = list(synthetic_samples(count, start=start))
    if case == "embeddings":
        return [{"response": row["response"], "reference": row["reference"]} for row in rows]
    return rows


def _metric(case: str, base_url: str) -> Any:
    from run_benchmark import chat_model, embedding_model

    from langchain_answer_metrics import FactualCorrectness, SemanticSimilarity

    if case == "embeddings":
        return SemanticSimilarity(embeddings=embedding_model(base_url))
    return FactualCorrectness(llm=chat_model(base_url))


def child(case: str, base_url: str, seed: int) -> None:
    """One fresh interpreter: the case run twice (cold, then warm), times on stdout."""
    try:
        from langchain_answer_metrics.run.runner import evaluate as evaluate_dataset
    except ImportError:  # a tree from before the run wing (--package-from)
        from langchain_answer_metrics.runner import evaluate as evaluate_dataset  # type: ignore[no-redef]

    concurrency = CASES[case][1]
    for phase, start in (("cold", seed), ("warm", seed + 10_000)):
        metric, samples = _metric(case, base_url), _samples(case, start)
        cpu, began = time.process_time(), time.monotonic()
        rows = evaluate_dataset(samples, [metric], max_concurrency=concurrency)
        ended, cpu = time.monotonic(), time.process_time() - cpu
        errors = sum(bool(row.errors) for row in rows)
        print(
            json.dumps(
                {"phase": phase, "began": began, "ended": ended, "cpu": cpu, "errors": errors}
            ),
            flush=True,
        )
        input()  # the parent reads the server's times before the next phase


def measure(
    server: Any, case: str, latency: float, seed: int, package_from: Path | None = None
) -> list[dict[str, Any]]:
    """One fresh interpreter running ``case`` cold then warm; a record per phase. With
    ``package_from``, the client imports the package from there (another tree, for a
    before/after comparison); the server stays this tree's."""
    server.reset()
    env = {**os.environ, "LANGSMITH_TRACING": "false"}
    if package_from is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(package_from), env.get("PYTHONPATH", "")])
    process = subprocess.Popen(
        [sys.executable, __file__, "--child", case, server.base_url, str(seed)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stdin is not None and process.stdout is not None
    records = []
    for _ in range(2):
        run = json.loads(process.stdout.readline())
        times = server.times()
        server.reset()
        process.stdin.write("\n")
        process.stdin.flush()
        records.append(describe(case, run, times, latency))
    process.wait(timeout=60)
    return records


def describe(
    case: str, run: dict[str, Any], times: list[tuple[float, float]], latency: float
) -> dict[str, Any]:
    _, concurrency, depth = CASES[case]
    requests = len(times)
    bound = max(depth, math.ceil(requests / concurrency)) * latency
    wall = run["ended"] - run["began"]
    first_round = [arrived for arrived, _ in times[: min(concurrency, requests)]]
    return {
        "case": case,
        "phase": run["phase"],
        "requests": requests,
        "errors": run["errors"],
        "wall": wall,
        "bound": bound,
        "ratio": wall / bound,
        "before_first": first_round[0] - run["began"],
        "first_round_spread": first_round[-1] - first_round[0],
        "after_last": run["ended"] - max(answered for _, answered in times),
        "client_cpu": run["cpu"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="fresh interpreters per case")
    parser.add_argument("--latency", type=float, default=1.0, help="seconds per request")
    parser.add_argument("--case", choices=sorted(CASES), action="append", help="default: both")
    parser.add_argument("--json", type=Path, help="write every record here")
    parser.add_argument(
        "--package-from", type=Path, help="the client's package from this tree (before/after)"
    )
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        case, base_url, seed = options.child
        child(case, base_url, int(seed))
        return

    from server_process import ServerProcess

    records: list[dict[str, Any]] = []
    with open("/proc/loadavg") as load:
        print(f"load average before: {load.read().split()[:3]}")
    with ServerProcess(latency=options.latency) as server:
        for case in options.case or list(CASES):
            for run in range(options.runs):
                for record in measure(
                    server, case, options.latency, (run + 1) * 10**6, options.package_from
                ):
                    records.append(record)
                    print(
                        f"{record['case']:10s} {record['phase']} run {run + 1}: "
                        f"{record['requests']} requests, wall {record['wall']:.3f} s / bound "
                        f"{record['bound']:.1f} s = {record['ratio']:.3f}x  (before the first "
                        f"request {record['before_first'] * 1000:.0f} ms, first round spread "
                        f"{record['first_round_spread'] * 1000:.0f} ms, after the last answer "
                        f"{record['after_last'] * 1000:.0f} ms; client CPU "
                        f"{record['client_cpu'] * 1000:.0f} ms; errors {record['errors']})",
                        flush=True,
                    )
    with open("/proc/loadavg") as load:
        print(f"load average after: {load.read().split()[:3]}")
    for case in options.case or list(CASES):
        for phase in ("cold", "warm"):
            ratios = [r["ratio"] for r in records if r["case"] == case and r["phase"] == phase]
            print(
                f"{case} {phase}: median {statistics.median(ratios):.3f}x "
                f"(runs: {', '.join(f'{ratio:.3f}' for ratio in ratios)})"
            )
    if options.json:
        options.json.write_text(json.dumps(records, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
