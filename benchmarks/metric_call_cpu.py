"""CPU per ainvoke of a cheap metric: metrics/calls.py against langchain-core's own path.

Run: ``python benchmarks/metric_call_cpu.py [--calls 2000] [--rounds 5]``; the figures are
quoted in metrics/calls.py.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from typing import Any

os.environ["LANGSMITH_TRACING"] = "false"
os.environ["LANGSMITH_TEST_TRACKING"] = "false"

from langchain_answer_metrics import SemanticSimilarity
from langchain_answer_metrics.metrics.base import AnswerMetric
from langchain_answer_metrics.testing.scripted import ScriptedEmbeddings

metric = SemanticSimilarity(embeddings=ScriptedEmbeddings())


def core(self: AnswerMetric, input: Any, config: Any = None, **kwargs: Any) -> Any:
    return self._acall_with_config(self._run, input, config, run_type="chain")


async def many(n: int) -> None:
    await asyncio.gather(
        *(metric.ainvoke({"response": f"Paris {i}.", "reference": "Paris."}) for i in range(n))
    )


def measure(label: str, n: int = 2000, rounds: int = 5) -> None:
    per_call = []
    for _ in range(rounds):
        start = time.process_time()
        asyncio.run(many(n))
        per_call.append((time.process_time() - start) / n * 1e6)
    print(f"{label}: {min(per_call):.0f} us CPU per ainvoke (best of {rounds})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000, help="ainvoke calls per round")
    parser.add_argument("--rounds", type=int, default=5, help="rounds (the best is shown)")
    args = parser.parse_args()
    measure("metrics/calls.acall_traced", args.calls, args.rounds)
    AnswerMetric.ainvoke = core  # type: ignore[method-assign,assignment]
    measure("langchain-core _acall_with_config", args.calls, args.rounds)
