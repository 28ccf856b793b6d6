"""How close a budget stops to its limit: ``evaluate(..., budget=USD)`` on the local server.

    python benchmarks/budget_precision.py [--samples 200] [--max-concurrency 16] [--json PATH]

The five-metric suite of benchmarks/estimate_accuracy.py over its varied en/ru/zh set
(short and long texts), priced by the server's reported usage (judge 0.15 / 0.60 and
embeddings 0.02 USD per million tokens). First a full run gives each sample's cost; then
runs with budgets of 10 %, 25 %, 50 % and 75 % of the full cost. For each: what was
spent, how far under the budget that is in units of the largest and the median sample
cost (the target: under the budget, by at most one sample), samples run, and wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from support import local_models, write_models_yaml  # noqa: E402
from test_estimate import five_metrics, make_samples  # noqa: E402

from langchain_answer_metrics.config import load_config  # noqa: E402
from langchain_answer_metrics.core.prices import Price  # noqa: E402
from langchain_answer_metrics.run.runner import evaluate  # noqa: E402
from langchain_answer_metrics.run.spend import Pricing, tally  # noqa: E402
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer  # noqa: E402

PRICES = {
    "judge-a": Price(input_per_million=0.15, output_per_million=0.60),
    "embed-a": Price(input_per_million=0.02),
}
SHARES = (0.10, 0.25, 0.50, 0.75)


def measure(samples: list[dict[str, Any]], metrics: list[Any], concurrency: int) -> dict[str, Any]:
    pricing = Pricing.of(metrics, prices=PRICES)
    full = evaluate(samples, metrics, prices=PRICES, max_concurrency=concurrency)
    costs = [tally([row.results], pricing).total.cost or 0.0 for row in full]
    total = sum(costs)
    runs = []
    for share in SHARES:
        budget = total * share
        started = time.perf_counter()
        rows = evaluate(samples, metrics, prices=PRICES, budget=budget, max_concurrency=concurrency)
        wall = time.perf_counter() - started
        spent = tally((row.results for row in rows if not row.not_run), pricing).total.cost or 0.0
        runs.append(
            {
                "share": share,
                "budget": budget,
                "spent": spent,
                "under_by_largest_samples": (budget - spent) / max(costs),
                "under_by_median_samples": (budget - spent) / statistics.median(costs),
                "samples_run": sum(not row.not_run for row in rows),
                "wall_seconds": wall,
            }
        )
    return {
        "samples": len(samples),
        "full_cost": total,
        "largest_sample": max(costs),
        "median_sample": statistics.median(costs),
        "runs": runs,
    }


def report(result: dict[str, Any]) -> str:
    lines = [
        f"full run: {result['samples']} samples, ${result['full_cost']:.6f}; sample cost "
        f"median ${result['median_sample']:.6f}, largest ${result['largest_sample']:.6f}",
        "",
        "| budget | spent | under the budget by (largest / median sample) | samples run |",
        "|---|---|---|---|",
    ]
    for run in result["runs"]:
        lines.append(
            f"| {run['share']:.0%} = ${run['budget']:.6f} | ${run['spent']:.6f} | "
            f"{run['under_by_largest_samples']:.2f} / {run['under_by_median_samples']:.2f} | "
            f"{run['samples_run']} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--max-concurrency", type=int, default=16)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    os.environ.setdefault("ANSWER_METRICS_BENCH_KEY", "sk-bench-budget")
    with LocalOpenAIServer() as server, tempfile.TemporaryDirectory() as tmp:
        config = local_models(server, "ANSWER_METRICS_BENCH_KEY")
        panel = load_config(write_models_yaml(Path(tmp), config))
        result = measure(make_samples(args.samples), five_metrics(panel), args.max_concurrency)
    print(report(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
