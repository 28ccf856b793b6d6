"""Requests per conversation of the four thread metrics on 10-turn threads (issue 29),
side by side with DeepEval's equivalents, counted from their code.

    python benchmarks/conversation_requests.py [--threads N] [--turns N] [--json PATH]

Ours: KnowledgeRetention, ConversationCompleteness, RoleAdherence and TopicAdherence,
each through ChatOpenAI against the local OpenAI-compatible server (its toy judge), one
judge; the requests are the server's own counter.

DeepEval's (4.3.1) cannot run against the local server (its toy judge does not answer
DeepEval's schemas), so its requests are counted from its metrics' code, for the same
threads, on its default path (``a_measure``, no experimental shortcut):

- KnowledgeRetention: one ``extract_data`` request per user message, one verdict per
  assistant message with knowledge before it, one reason;
- ConversationCompleteness: one intention extraction, one verdict per intention
  (``asyncio.gather``), one reason;
- RoleAdherence: one out-of-character verdict list, one reason;
- TopicAdherence: one QA-pair extraction per unit interaction, one verdict per QA pair,
  one reason.

The intentions and QA pairs per thread are taken as one per user message (the threads
here ask one thing per turn), which is what those extractions return on them.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from langchain_openai import ChatOpenAI

from langchain_answer_metrics import (
    ConversationCompleteness,
    ConversationSample,
    KnowledgeRetention,
    RoleAdherence,
    TopicAdherence,
)
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

TOPICS = ["cooking", "recipes"]


def thread(turns: int, number: int) -> ConversationSample:
    messages: list[dict[str, str]] = [
        {"role": "system", "content": "You are a cooking assistant. Never give medical advice."}
    ]
    for turn in range(1, turns + 1):
        messages.append({"role": "user", "content": f"Cooking question {turn} of thread {number}?"})
        messages.append({"role": "assistant", "content": f"A cooking answer to question {turn}."})
    return ConversationSample(messages=messages, goal="Learn to cook a dinner")


def deepeval_requests(turns: int) -> dict[str, int]:
    """DeepEval's requests for one thread of ``turns`` user/assistant pairs (see above)."""
    return {
        "knowledge_retention": turns + turns + 1,
        "conversation_completeness": 1 + turns + 1,
        "role_adherence": 1 + 1,
        "topic_adherence": turns + turns + 1,
    }


def measure(threads: int, turns: int) -> dict[str, Any]:
    samples = [thread(turns, number) for number in range(threads)]
    ours: dict[str, float] = {}
    with LocalOpenAIServer() as server:
        judge = ChatOpenAI(
            model="judge-a",
            base_url=server.base_url,
            api_key="sk-bench",
            use_responses_api=False,
            max_retries=0,
        )
        metrics = [
            KnowledgeRetention(llm=judge),
            ConversationCompleteness(llm=judge),
            RoleAdherence(llm=judge),
            TopicAdherence(llm=judge, topics=TOPICS),
        ]
        for metric in metrics:
            server.reset()
            results = metric.batch(samples)
            failed = [result for result in results if result.score is None]
            if failed:
                raise SystemExit(f"{metric.key}: {len(failed)} threads not scored")
            ours[metric.key] = server.chat_requests / threads
    theirs = deepeval_requests(turns)
    return {
        "threads": threads,
        "turns": turns,
        "ours": ours,
        "deepeval": theirs,
        "ours_total": sum(ours.values()),
        "deepeval_total": sum(theirs.values()),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=20)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = parser.parse_args(argv)
    figures = measure(args.threads, args.turns)
    print(
        f"{figures['threads']} threads of {figures['turns']} turns; requests per thread, one judge"
    )
    print(f"{'metric':28} {'ours':>6} {'DeepEval':>9}")
    for key, count in figures["ours"].items():
        print(f"{key:28} {count:6.1f} {figures['deepeval'][key]:9d}")
    ratio = figures["ours_total"] / figures["deepeval_total"]
    print(
        f"{'all four':28} {figures['ours_total']:6.1f} {figures['deepeval_total']:9d}"
        f"   ours / DeepEval = {ratio:.2f}"
    )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
