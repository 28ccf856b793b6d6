"""Samples finish in input order (issue 10): the completion curve of a run, and its wall
time against the critical-path bound.

Run from the repository root::

    python benchmarks/completion_curve.py            # 200 samples at 200 ms
    python benchmarks/completion_curve.py --quick    # 64 samples

The five-metric suite of :mod:`run_benchmark` (AspectCritic strictness 1) is streamed
through ``stream_evaluate`` against the local server (own process) at a fixed latency.
The time each row arrives is recorded; the curve is the share of samples finished at
25 %, 50 % and 75 % of the run's wall time, next to the ideal straight line (25 / 50 /
75 %). The run's wall time is compared with :func:`run_benchmark.wall_bound`.

With ``--embeddings N`` it also times SemanticSimilarity alone over N samples, through
``abatch`` and through the runner, against its own bound (``ceil(requests /
max_concurrency) x latency``, at least one latency), each after a ``gc.collect()`` so that
neither pays for what the one before left. ``--no-curve`` skips the completion curve.

Nothing here is asserted; the numbers go to ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run_benchmark import (  # noqa: E402
    SuiteRun,
    chat_model,
    embedding_model,
    suite,
    synthetic_samples,
    wall_bound,
)

POINTS = (0.25, 0.5, 0.75)


def curve(finished_at: Sequence[float], wall: float) -> dict[float, float]:
    """The share of samples finished at each point of ``POINTS`` of ``wall``."""
    return {
        point: sum(moment <= point * wall for moment in finished_at) / len(finished_at)
        for point in POINTS
    }


def measure_runner(server, samples: int, concurrency: int, latency: float) -> dict:
    from langchain_answer_metrics.run.runner import stream_evaluate

    metrics = suite(chat_model(server.base_url), embedding_model(server.base_url), 1)
    data = list(synthetic_samples(samples, start=3 * 10**6))
    server.reset()
    started = time.perf_counter()
    finished_at = []
    errors = 0
    for row in stream_evaluate(data, metrics, max_concurrency=concurrency):
        finished_at.append(time.perf_counter() - started)
        errors += bool(row.errors)
    wall = time.perf_counter() - started
    stats = server.stats()
    run = SuiteRun(
        strictness=1,
        samples=samples,
        latency=latency,
        max_concurrency=concurrency,
        wall_seconds=wall,
        cpu_seconds=0.0,
        chat_requests=stats.chat_requests,
        embedding_requests=stats.embedding_requests,
        prompt_tokens=stats.prompt_tokens,
        completion_tokens=stats.completion_tokens,
        n_values=stats.n_values,
        metric_errors=errors,
    )
    return {
        "wall": wall,
        "bound": wall_bound(run),
        "curve": curve(finished_at, wall),
        "first_row": finished_at[0],
        "errors": errors,
        "requests": stats.chat_requests + stats.embedding_requests,
    }


def measure_embeddings(server, samples: int, concurrency: int, latency: float) -> dict:
    """SemanticSimilarity alone over ``samples`` samples, through ``abatch`` and through
    the runner, each against ``ceil(requests / max_concurrency)`` latencies."""
    from langchain_answer_metrics import SemanticSimilarity

    metric = SemanticSimilarity(embeddings=embedding_model(server.base_url))
    data = [
        {"response": row["response"], "reference": row["reference"]}
        for row in synthetic_samples(samples, start=4 * 10**6)
    ]
    from langchain_answer_metrics.run.runner import evaluate

    measured = {}
    for path in ("abatch", "runner"):
        server.reset()
        # What the previous measurement left for the collector is not this one's cost.
        gc.collect()
        started = time.perf_counter()
        if path == "abatch":
            results = asyncio.run(metric.abatch(data, {"max_concurrency": concurrency}))
        else:
            results = evaluate(data, [metric], max_concurrency=concurrency)
        wall = time.perf_counter() - started
        requests = server.stats().embedding_requests
        bound = max(1, math.ceil(requests / concurrency)) * latency
        measured[path] = {
            "wall": wall,
            "bound": bound,
            "requests": requests,
            "scored": len(results),
        }
    return measured


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="64 samples")
    parser.add_argument("--samples", type=int)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--max-concurrency", type=int, default=16)
    parser.add_argument("--no-curve", action="store_true", help="skip the completion curve")
    parser.add_argument(
        "--embeddings",
        type=int,
        metavar="N",
        help="also time SemanticSimilarity.abatch over N samples",
    )
    args = parser.parse_args(argv)
    samples = args.samples or (64 if args.quick else 200)
    from server_process import ServerProcess

    with ServerProcess(latency=0.0) as server:
        # Warm up connection pools and lazy imports at zero latency.
        measure_runner(server, 16, args.max_concurrency, 0.0)
        server.set_latency(args.latency)
        if not args.no_curve:
            result = measure_runner(server, samples, args.max_concurrency, args.latency)
            shares = ", ".join(
                f"{point:.0%} of wall: {share:.0%} done (ideal {point:.0%}, "
                f"{100 * (share - point):+.0f} points)"
                for point, share in result["curve"].items()
            )
            print(
                f"runner, {samples} samples at {args.latency * 1000:.0f} ms, max_concurrency "
                f"{args.max_concurrency}: {result['requests']} requests, errors "
                f"{result['errors']}"
            )
            print(f"  completion curve: {shares}")
            print(f"  first row after {result['first_row']:.2f} s")
            print(
                f"  wall {result['wall']:.2f} s vs bound {result['bound']:.2f} s = "
                f"{result['wall'] / result['bound']:.2f}x"
            )
        if args.embeddings:
            emb = measure_embeddings(server, args.embeddings, args.max_concurrency, args.latency)
            for path, run in emb.items():
                print(
                    f"SemanticSimilarity via {path}, {run['scored']} samples, max_concurrency "
                    f"{args.max_concurrency}: {run['requests']} requests, wall "
                    f"{run['wall']:.2f} s vs bound {run['bound']:.2f} s = "
                    f"{run['wall'] / run['bound']:.2f}x"
                )


if __name__ == "__main__":
    main()
