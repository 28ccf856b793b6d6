"""Chat requests per sample for the seven-metric RAG suite, with and without sharing (issue 24).

    python benchmarks/rag_requests.py [--json PATH]

The suite: SemanticSimilarity, FactualCorrectness (f1), AnswerCorrectness, AspectCritic
(strictness 1), Faithfulness, ContextRecall and ContextPrecision, on the bundled demo data
(12 samples in English, Russian and Chinese), against the local OpenAI-compatible server
(its toy judge) in process. Requests are the server's own counters, by reply schema.

- **With sharing**: all seven metrics in one ``evaluate_dataset`` call, which sends an
  identical structured call once (the reference's decomposition, shared by
  FactualCorrectness's recall side, AnswerCorrectness and ContextRecall; the response's,
  shared by FactualCorrectness's precision side, AnswerCorrectness and Faithfulness).
- **Without sharing**: each metric in a run of its own, summed.

The target (issue 24): at most 8 chat requests per sample with sharing.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from langchain_openai import ChatOpenAI, OpenAIEmbeddings

from langchain_answer_metrics import (
    AnswerCorrectness,
    AnswerMetric,
    AspectCritic,
    ContextPrecision,
    ContextRecall,
    FactualCorrectness,
    Faithfulness,
    SemanticSimilarity,
    evaluate_dataset,
)
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer
from langchain_answer_metrics.testing.prompt_reading import schema_name_for_request

DEMO = Path(__file__).resolve().parent.parent / "langchain_answer_metrics" / "data" / "demo.jsonl"
FIELDS = ("user_input", "response", "reference", "retrieved_contexts")
TARGET = 8


def demo_samples() -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in DEMO.read_text("utf-8").splitlines() if line.strip()]
    return [{name: row[name] for name in FIELDS} for row in rows]


def seven_metrics(server: LocalOpenAIServer) -> list[AnswerMetric]:
    llm = ChatOpenAI(
        model="judge-a",
        base_url=server.base_url,
        api_key="sk-bench",
        use_responses_api=False,
        max_retries=0,
    )
    embeddings = OpenAIEmbeddings(
        model="embed-a",
        base_url=server.base_url,
        api_key="sk-bench",  # type: ignore[call-arg]
        check_embedding_ctx_length=False,
    )
    return [
        SemanticSimilarity(embeddings=embeddings),
        FactualCorrectness(llm=llm),
        AnswerCorrectness(llm=llm, embeddings=embeddings),
        AspectCritic(llm=llm, criterion="The response gives a year or a date."),
        Faithfulness(llm=llm),
        ContextRecall(llm=llm),
        ContextPrecision(llm=llm),
    ]


def run(
    server: LocalOpenAIServer, samples: list[dict[str, Any]], metrics: list[AnswerMetric]
) -> dict[str, Any]:
    """One ``evaluate_dataset`` call: chat requests by schema, embedding requests."""
    server.reset()
    results = evaluate_dataset(samples, metrics, max_concurrency=8)
    failed = [key for row in results for key in row.errors]
    if failed:
        raise SystemExit(f"metrics failed: {sorted(set(failed))}")
    by_schema = Counter(
        schema_name_for_request(entry.body) or "?"
        for entry in server.requests
        if entry.path.endswith("/chat/completions")
    )
    return {
        "chat": server.chat_requests,
        "embedding": server.embedding_requests,
        "by_schema": dict(sorted(by_schema.items())),
    }


def measure() -> dict[str, Any]:
    samples = demo_samples()
    with LocalOpenAIServer() as server:
        metrics = seven_metrics(server)
        shared = run(server, samples, metrics)
        alone = {metric.key: run(server, samples, [metric]) for metric in metrics}
    count = len(samples)
    unshared = sum(part["chat"] for part in alone.values())
    return {
        "samples": count,
        "shared": {**shared, "per_sample": shared["chat"] / count},
        "alone": {key: {**part, "per_sample": part["chat"] / count} for key, part in alone.items()},
        "unshared": {"chat": unshared, "per_sample": unshared / count},
        "target_per_sample": TARGET,
        "met": shared["chat"] / count <= TARGET,
    }


def report(figures: dict[str, Any]) -> str:
    lines = [
        f"{figures['samples']} demo samples, local server (toy judge)",
        "",
        "| run | chat requests | per sample | by schema |",
        "|---|---|---|---|",
    ]
    for key, part in figures["alone"].items():
        schemas = ", ".join(f"{name} {n}" for name, n in part["by_schema"].items()) or "-"
        lines.append(f"| {key} alone | {part['chat']} | {part['per_sample']:.2f} | {schemas} |")
    unshared = figures["unshared"]
    lines.append(
        f"| **without sharing** (sum) | {unshared['chat']} | {unshared['per_sample']:.2f} | |"
    )
    shared = figures["shared"]
    schemas = ", ".join(f"{name} {n}" for name, n in shared["by_schema"].items())
    lines.append(
        f"| **with sharing** (one run) | {shared['chat']} | "
        f"{shared['per_sample']:.2f} | {schemas} |"
    )
    verdict = "met" if figures["met"] else "MISSED"
    lines += [
        "",
        f"target: <= {figures['target_per_sample']} chat requests per sample "
        f"with sharing: {verdict}",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = parser.parse_args(argv)
    figures = measure()
    print(report(figures))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2), "utf-8")
    return 0 if figures["met"] else 1


if __name__ == "__main__":
    sys.exit(main())
