"""How close estimate() comes to a real run: requests, prompt and completion tokens.

    python benchmarks/estimate_accuracy.py [--samples 200] [--json PATH]

On the local OpenAI-compatible server (in process, heuristic judge), for the five-metric
suite (AspectCritic at strictness 3, so its votes go as one request with n=3), over two
sample sets: the varied set of tests/test_estimate.py (en/ru/zh, short and long,
repeated references and samples) and run_benchmark.py's synthetic set (all distinct).
For each: the estimate (sent no request), then the real run, then the comparison:

- requests per model, estimated and received;
- prompt tokens: with the server's own rule as the counter, and with the default
  counter (against the server's rule: the server is no tokenizer, so this says how far
  the default's rule is from chars/4, per language);
- completion tokens: the estimated range against what the server reported.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from run_benchmark import synthetic_samples  # noqa: E402
from support import local_models, write_models_yaml  # noqa: E402
from test_estimate import (  # noqa: E402
    FACTS,
    five_metrics,
    make_samples,
    server_prompt_tokens,
    server_rule,
)

from langchain_answer_metrics import MetricResult, runner  # noqa: E402
from langchain_answer_metrics.config import load_config  # noqa: E402
from langchain_answer_metrics.costs import default_token_count, estimate  # noqa: E402
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer  # noqa: E402


def off(estimated: float, actual: float) -> str:
    return f"{100 * (estimated - actual) / actual:+.1f} %" if actual else "n/a"


def measure(
    server: LocalOpenAIServer, samples: list[dict[str, Any]], metrics: list[Any]
) -> dict[str, Any]:
    server.reset()
    started = time.perf_counter()
    by_rule = estimate(samples, metrics, token_counter=server_rule, count_schema=False)
    estimate_seconds = time.perf_counter() - started
    by_default = estimate(samples, metrics, count_schema=False)
    with_schema = estimate(samples, metrics)
    sent_by_estimates = len(server.requests)
    started = time.perf_counter()
    rows = runner.evaluate(samples, metrics)
    run_seconds = time.perf_counter() - started
    chat_tokens, embedding_tokens = server_prompt_tokens(server)
    completion = sum(
        usage.output_tokens
        for row in rows
        for outcome in row.results.values()
        if isinstance(outcome, MetricResult)
        for label, usage in outcome.usage.items()
        if label == "judge-a"
    )
    judge, embedder = by_rule.models["judge-a"], by_rule.models["embed-a"]
    return {
        "samples": len(samples),
        "requests_sent_by_estimates": sent_by_estimates,
        "chat_requests": {"estimated": judge.requests, "actual": server.chat_requests},
        "embedding_requests": {"estimated": embedder.requests, "actual": server.embedding_requests},
        "chat_prompt_tokens": {
            "actual": chat_tokens,
            "server_rule": judge.prompt_tokens,
            "default_counter": by_default.models["judge-a"].prompt_tokens,
            "default_counter_with_schema": with_schema.models["judge-a"].prompt_tokens,
        },
        "embedding_tokens": {
            "actual": embedding_tokens,
            "server_rule": embedder.prompt_tokens,
            "default_counter": by_default.models["embed-a"].prompt_tokens,
        },
        "completion_tokens": {
            "actual": completion,
            "low": judge.completion_tokens_low,
            "high": judge.completion_tokens_high,
            "default_low": by_default.models["judge-a"].completion_tokens_low,
            "default_high": by_default.models["judge-a"].completion_tokens_high,
        },
        "seconds": {"estimate": round(estimate_seconds, 2), "run": round(run_seconds, 2)},
        "metric_errors": sum(bool(row.errors) for row in rows),
    }


def counter_by_language() -> dict[str, Any]:
    """The default counter against chars/4 on the test's facts, per language."""
    out = {}
    for language, facts in FACTS.items():
        text = " ".join(facts * 20)
        out[language] = {
            "chars": len(text),
            "server_rule": server_rule(text),
            "default_counter": default_token_count(text),
        }
    return out


def report(results: dict[str, Any]) -> str:
    lines = []
    for name, r in results["sets"].items():
        p, c = r["chat_prompt_tokens"], r["completion_tokens"]
        lines += [
            f"{name}: {r['samples']} samples, estimate {r['seconds']['estimate']} s, "
            f"run {r['seconds']['run']} s, requests sent by the estimates: "
            f"{r['requests_sent_by_estimates']}, metric errors: {r['metric_errors']}",
            f"  chat requests      estimated {r['chat_requests']['estimated']:>7}  "
            f"actual {r['chat_requests']['actual']:>7}",
            f"  embedding requests estimated {r['embedding_requests']['estimated']:>7}  "
            f"actual {r['embedding_requests']['actual']:>7}",
            f"  chat prompt tokens actual {p['actual']}; server rule {p['server_rule']} "
            f"({off(p['server_rule'], p['actual'])}); default counter {p['default_counter']} "
            f"({off(p['default_counter'], p['actual'])}); default + schema "
            f"{p['default_counter_with_schema']}",
            f"  completion tokens  actual {c['actual']}; range {c['low']}..{c['high']} "
            f"(server rule), {c['default_low']}..{c['default_high']} (default counter)",
        ]
    for language, r in results["counter_by_language"].items():
        lines.append(
            f"counter, {language}: {r['chars']} chars, chars/4 {r['server_rule']}, "
            f"default {r['default_counter']} ({off(r['default_counter'], r['server_rule'])})"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    os.environ.setdefault("ANSWER_METRICS_BENCH_KEY", "sk-bench-estimate")
    with LocalOpenAIServer() as server, tempfile.TemporaryDirectory() as tmp:
        config = local_models(server, "ANSWER_METRICS_BENCH_KEY", temperature=0.7)
        panel = load_config(write_models_yaml(Path(tmp), config))
        metrics = five_metrics(panel)
        results = {
            "sets": {
                "varied (en/ru/zh)": measure(server, make_samples(args.samples), metrics),
                "synthetic (distinct)": measure(
                    server, list(synthetic_samples(args.samples)), metrics
                ),
            },
            "counter_by_language": counter_by_language(),
        }
    print(report(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
