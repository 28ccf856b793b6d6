"""The cost of a seven-metric run, live against batch mode (issue 31).

    python benchmarks/batch_cost.py [--samples 1000] [--json PATH]

The seven-metric RAG suite of ``rag_requests.py`` (SemanticSimilarity, FactualCorrectness,
AnswerCorrectness, AspectCritic, Faithfulness, ContextRecall, ContextPrecision) on
``run_benchmark.py``'s synthetic samples (all distinct), judged by ``gpt-4o-mini`` at its
built-in price (and ``text-embedding-3-small`` for the embeddings) on the local
OpenAI-compatible server, in process. Three ways to the cost, live and with
``batch=True``:

- the estimate (a dry run; the batch figure prices the judge and the embedder at their
  batch price);
- the spend the run recorded (``rows.spend()``);
- the server's own count of the tokens it answered, priced: live requests counted as
  they are served, batch lines (chat completions and embeddings) by the Files and
  Batches API (``server.batch.usage``).

The target: batch <= 0.5 x live + 1 %. The embeddings go through batches too (in round
1, beside the decompositions). Also checked: the scores of the two runs are equal, the
batch run sent no live chat or embedding request, and it took two rounds.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from langchain_openai import ChatOpenAI, OpenAIEmbeddings

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run_benchmark import synthetic_samples  # noqa: E402

from langchain_answer_metrics import (  # noqa: E402
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
from langchain_answer_metrics.core.prices import price_for  # noqa: E402
from langchain_answer_metrics.costs import estimate  # noqa: E402
from langchain_answer_metrics.run.spend import batch_labels  # noqa: E402
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer  # noqa: E402
from langchain_answer_metrics.testing.replies import Reply  # noqa: E402

JUDGE, EMBEDDER = "gpt-4o-mini", "text-embedding-3-small"


class CountingServer(LocalOpenAIServer):
    """The local server, also counting the tokens of the live chat replies it serves."""

    def __init__(self) -> None:
        super().__init__(log_bodies=False)
        self.live_usage: Counter[str] = Counter()

    def handle(
        self, path: str, raw_body: bytes, headers: Mapping[str, str], **options: Any
    ) -> Reply:
        reply = super().handle(path, raw_body, headers, **options)
        usage = reply.body.get("usage") if reply.status == 200 else None
        if isinstance(usage, dict) and path.rstrip("/").endswith("/chat/completions"):
            with self._lock:
                self.live_usage["prompt_tokens"] += int(usage.get("prompt_tokens") or 0)
                self.live_usage["completion_tokens"] += int(usage.get("completion_tokens") or 0)
        if isinstance(usage, dict) and path.rstrip("/").endswith("/embeddings"):
            with self._lock:
                self.live_usage["embedding_tokens"] += int(usage.get("prompt_tokens") or 0)
        return reply


def suite(server: LocalOpenAIServer) -> list[AnswerMetric]:
    llm = ChatOpenAI(
        model=JUDGE,
        base_url=server.base_url,
        api_key="sk-test",
        use_responses_api=False,
        max_retries=0,
        temperature=0,
    )
    embeddings = OpenAIEmbeddings(
        model=EMBEDDER,
        base_url=server.base_url,
        api_key="sk-test",
        check_embedding_ctx_length=False,
    )
    return [
        SemanticSimilarity(embeddings=embeddings),
        FactualCorrectness(llm=llm),
        AnswerCorrectness(llm=llm, embeddings=embeddings),
        AspectCritic(llm=llm, name="harmless", criterion="The response is harmless."),
        Faithfulness(llm=llm),
        ContextRecall(llm=llm),
        ContextPrecision(llm=llm),
    ]


def server_cost(chat: Mapping[str, int], embedding_tokens: int, *, batch: bool) -> float:
    judge = price_for(JUDGE)
    embedder = price_for(EMBEDDER)
    assert judge is not None and embedder is not None
    if batch:
        judge, embedder = judge.discounted(), embedder.discounted()
    return judge.cost(chat["prompt_tokens"], chat["completion_tokens"]) + embedder.cost(
        embedding_tokens
    )


def measure(count: int) -> dict[str, Any]:
    samples = list(synthetic_samples(count))
    # The built-in list prices, given: a model on this machine takes none by itself.
    prices = {name: price for name in (JUDGE, EMBEDDER) if (price := price_for(name))}
    with CountingServer() as server:
        planned = estimate(samples, suite(server), prices=prices)
        batched_labels = batch_labels(suite(server))  # the judge and the embedder
        batch_estimate = sum(
            (model.price.discounted() if label in batched_labels else model.price).cost(
                model.prompt_tokens, model.completion_tokens_high
            )
            for label, model in planned.models.items()
            if model.price is not None
        )

        started = time.perf_counter()
        live = evaluate_dataset(samples, suite(server), prices=prices)
        live_seconds = time.perf_counter() - started
        live_server = server_cost(
            server.live_usage, server.live_usage["embedding_tokens"], batch=False
        )
        live_chat_requests = server.chat_requests
        server.reset()
        server.live_usage.clear()

        started = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            batched = evaluate_dataset(
                samples,
                suite(server),
                batch=True,
                batch_poll_s=0.2,
                batch_min_requests=0,
                prices=prices,
            )
        batch_seconds = time.perf_counter() - started
        live_embedding_requests = server.embedding_requests
        batch_server = server_cost(
            server.batch.usage[JUDGE], server.batch.usage[EMBEDDER]["prompt_tokens"], batch=True
        ) + server_cost(Counter(), server.live_usage["embedding_tokens"], batch=False)
        same = all(
            {k: r.score for k, r in a.results.items()} == {k: r.score for k, r in b.results.items()}
            for a, b in zip(live, batched)
        )
        result = {
            "samples": count,
            "estimate": {
                "live": planned.total.cost_high,
                "batch": batch_estimate,
            },
            "recorded": {"live": live.spend().total.cost, "batch": batched.spend().total.cost},
            "server": {"live": live_server, "batch": batch_server},
            "live_chat_requests": live_chat_requests,
            "batch_lines": server.batch.lines,
            "batch_live_chat_requests": server.chat_requests,
            "batch_live_embedding_requests": live_embedding_requests,
            "batches": len(server.batch.created),
            "scores_equal": same,
            "errors": sum(bool(row.errors) for row in (*live, *batched)),
            "seconds": {"live": live_seconds, "batch": batch_seconds},
        }
    for way in ("estimate", "recorded", "server"):
        pair = result[way]
        pair["ratio"] = pair["batch"] / pair["live"]
        pair["met"] = pair["batch"] <= 0.5 * pair["live"] * 1.01
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    result = measure(args.samples)
    print(f"{args.samples} samples, seven metrics ({JUDGE} judge, {EMBEDDER})")
    for way in ("estimate", "recorded", "server"):
        pair = result[way]
        print(
            f"  {way:9s} live ${pair['live']:.4f}  batch ${pair['batch']:.4f}  "
            f"ratio {pair['ratio']:.4f}  target <= 0.505: {'met' if pair['met'] else 'MISSED'}"
        )
    print(
        f"  live chat requests {result['live_chat_requests']}, batch lines "
        f"{result['batch_lines']} in {result['batches']} batches, live chat and embedding "
        f"requests in batch mode {result['batch_live_chat_requests']} and "
        f"{result['batch_live_embedding_requests']}; scores equal: "
        f"{result['scores_equal']}; errors {result['errors']}; "
        f"{result['seconds']['live']:.0f} s live, {result['seconds']['batch']:.0f} s batch"
    )
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
