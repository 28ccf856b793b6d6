"""Throughput of ``evaluate_dataset`` against the number of Ray actors, at a fixed server
latency (issue 14).

    python benchmarks/ray_actors.py                    # 1, 2, 4 actors; 192 rows; 100 ms
    python benchmarks/ray_actors.py --actors 1 2 --rows 48 --latency 0.05

A local Ray cluster (``ray.init(num_cpus=4)``: logical CPUs, one per actor) scores the
same distinct rows with FactualCorrectness and Faithfulness, judged by the local
OpenAI-compatible server (heuristic judge, a fixed latency per request, in this process).
Two budgets:

- ``per-actor``: each actor keeps 4 requests in flight (``max_concurrency = 4 x actors``):
  how throughput grows when actors are added;
- ``global``: ``max_concurrency`` fixed at 16 and split across the actors: what the split
  costs (the provider sees at most 16 requests in flight whatever the pool).

Wall time includes starting the actors (each imports the package and builds its models),
as a real run does. Throughput is rows per second; ratios are against one actor.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

KEY_ENV = "ANSWER_METRICS_BENCH_KEY"
METRICS = ["factual_correctness", "faithfulness"]


def make_row(i: int) -> dict[str, Any]:
    year = 1800 + i
    return {
        "id": f"q{i}",
        "question": f"When was exhibition number {i} held?",
        "answer": f"Exhibition number {i} was held in {year}. It had {i % 7 + 2} halls.",
        "ground_truth": f"Exhibition number {i} was held in {year}.",
        "contexts": [f"Exhibition number {i} opened in {year}.", "Exhibitions have halls."],
    }


def models_yaml(directory: Path, server: LocalOpenAIServer) -> Path:
    config = {
        "providers": {"local": {"base_url": server.base_url, "api_key_env": KEY_ENV}},
        "chat_models": {"list": [{"id": "judge-a", "provider": "local"}]},
        "embedding_models": {"list": [{"id": "embed-a", "provider": "local"}]},
    }
    path = directory / "models.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def run(ray: Any, config: Path, rows: list[dict[str, Any]], actors: int, budget: int) -> float:
    from langchain_answer_metrics.ray import evaluate_dataset

    started = time.perf_counter()
    scored = evaluate_dataset(
        ray.data.from_items(rows),
        metrics=METRICS,
        config=config,
        actors=actors,
        batch_size=8,
        max_concurrency=budget,
    ).to_pandas()
    elapsed = time.perf_counter() - started
    assert len(scored) == len(rows)
    assert scored[[f"{key}_error" for key in METRICS]].isna().all().all()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--actors", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--rows", type=int, default=192)
    parser.add_argument("--latency", type=float, default=0.1, help="seconds per request")
    args = parser.parse_args()

    os.environ[KEY_ENV] = "sk-bench"
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    import ray

    rows = [make_row(i) for i in range(args.rows)]
    with tempfile.TemporaryDirectory() as tmp, LocalOpenAIServer(latency=args.latency) as server:
        config = models_yaml(Path(tmp), server)
        ray.init(num_cpus=max(args.actors), include_dashboard=False, log_to_driver=False)
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False
        context.print_on_execution_start = False
        try:
            print(f"{args.rows} rows, {', '.join(METRICS)}, {args.latency * 1000:.0f} ms/request")
            print("| budget | actors | max_concurrency | requests | wall s | rows/s | vs 1 actor |")
            print("|---|---|---|---|---|---|---|")
            for mode in ("per-actor", "global"):
                base = None
                for actors in args.actors:
                    budget = 4 * actors if mode == "per-actor" else 16
                    server.reset()
                    elapsed = run(ray, config, rows, actors, budget)
                    rate = args.rows / elapsed
                    base = base or rate
                    print(
                        f"| {mode} | {actors} | {budget} | {len(server.requests)} | "
                        f"{elapsed:.1f} | {rate:.1f} | {rate / base:.2f}x |",
                        flush=True,
                    )
        finally:
            ray.shutdown()


if __name__ == "__main__":
    main()
