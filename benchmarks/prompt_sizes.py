"""How large the five-metric suite's requests are, and how much of each is a static prefix.

    python benchmarks/prompt_sizes.py [--package-root PATH] [--json PATH]

Runs FactualCorrectness (f1), AnswerCorrectness, Faithfulness, SemanticSimilarity and
AspectCritic (strictness 1) over a fixed set of samples (English, Russian, Chinese; a
sentence-long and a one-word reference in each) on the local OpenAI-compatible server,
in process, and reads every chat request the server logged:

- characters per request: the message contents, and the prompt as a model reads it
  (message contents plus the tool or response-format schema the request carries);
- tokens per request by the server's rule (``max(1, len // 4) + 4`` per message);
- the static prefix: per step, the longest prefix every request of that step shares
  (tools first, then the messages in order, as a provider caches them), as a share of
  each request: what a provider's automatic prompt caching can discount;
- requests per sample.

``--package-root`` imports ``langchain_answer_metrics`` from another checkout (e.g.
``git worktree add /tmp/before <commit>``), to measure the prompts before a change.
``--synthetic N`` measures run_benchmark.py's synthetic samples instead. ``--ragas DIR``
also runs RAGAS's five metrics (FactualCorrectness, AnswerCorrectness, Faithfulness,
SemanticSimilarity, AspectCritic; its legacy ``ragas.metrics`` API, defaults) on the same
samples and server, with a responder that answers its prompts with valid JSON, and
reports our characters per sample as a share of its.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

SAMPLES: list[dict[str, Any]] = [
    {
        "user_input": "When was the Eiffel Tower completed, and how tall is it?",
        "response": "The Eiffel Tower was completed in 1889. It is about 330 metres tall "
        "and stands in Paris.",
        "reference": "The Eiffel Tower was completed in 1889 and is 330 metres tall.",
        "retrieved_contexts": [
            "The Eiffel Tower, in Paris, was completed in 1889 for the World's Fair.",
            "The tower is 330 metres tall, including its antennas.",
        ],
    },
    {
        "user_input": "What is the capital of France?",
        "response": "The capital of France is Paris.",
        "reference": "Paris",
        "retrieved_contexts": ["Paris is the capital and largest city of France."],
    },
    {
        "user_input": "Когда и кем был основан Санкт-Петербург?",
        "response": "Санкт-Петербург основал Пётр I в 1703 году. Это второй по величине "
        "город России.",
        "reference": "Санкт-Петербург был основан Петром I в 1703 году.",
        "retrieved_contexts": [
            "Санкт-Петербург основан 27 мая 1703 года Петром I.",
            "Это второй по численности населения город России.",
        ],
    },
    {
        "user_input": "Какая самая длинная река в Европе?",
        "response": "Самая длинная река Европы — Волга.",
        "reference": "Волга",
        "retrieved_contexts": ["Волга — самая длинная река Европы, её длина 3530 км."],
    },
    {
        "user_input": "长城有多长？它是什么时候开始修建的？",
        "response": "长城全长约21196公里。最早的城墙修建于公元前7世纪。",
        "reference": "长城全长21196公里，始建于公元前7世纪。",
        "retrieved_contexts": [
            "据2012年的测量，长城全长21196.18公里。",
            "长城的修建始于公元前7世纪的春秋时期。",
        ],
    },
    {
        "user_input": "中国的首都是哪里？",
        "response": "中国的首都是北京。",
        "reference": "北京",
        "retrieved_contexts": ["北京是中华人民共和国的首都。"],
    },
]

CRITERION = "The response answers the question directly."


def _models(base_url: str) -> tuple[Any, Any]:
    from langchain_openai import ChatOpenAI, OpenAIEmbeddings

    llm = ChatOpenAI(
        model="judge-a", base_url=base_url, api_key="sk-prompt-sizes", use_responses_api=False
    )
    embeddings = OpenAIEmbeddings(  # type: ignore[call-arg]  # base_url, api_key: aliases
        model="embed-a",
        base_url=base_url,
        api_key="sk-prompt-sizes",
        check_embedding_ctx_length=False,
    )
    return llm, embeddings


def _suite(llm: Any, embeddings: Any) -> list[Any]:
    from langchain_answer_metrics import (
        AnswerCorrectness,
        AspectCritic,
        FactualCorrectness,
        Faithfulness,
        SemanticSimilarity,
    )

    return [
        FactualCorrectness(llm=llm),
        AnswerCorrectness(llm=llm, embeddings=embeddings),
        Faithfulness(llm=llm),
        SemanticSimilarity(embeddings=embeddings),
        AspectCritic(llm=llm, name="direct", criterion=CRITERION),
    ]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def _schema_text(body: dict[str, Any]) -> str:
    """The schema a request carries, as JSON text (a provider reads and bills it)."""
    shown = {key: body[key] for key in ("tools", "response_format") if key in body}
    return json.dumps(shown, ensure_ascii=False) if shown else ""


def _step(body: dict[str, Any]) -> str:
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        return str(choice.get("function", {}).get("name"))
    response_format = body.get("response_format") or {}
    return str(response_format.get("json_schema", {}).get("name", "text"))


def _common_prefix(texts: list[str]) -> int:
    # Character by character on purpose: the shared start of the prompts' text.
    return len(os.path.commonprefix(texts)) if len(texts) > 1 else 0  # noqa: RUF071


def measure() -> dict[str, Any]:
    """Run the suite on :data:`SAMPLES` and describe every chat request it sent."""
    from langchain_answer_metrics.run import runner
    from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer
    from langchain_answer_metrics.testing.replies import approx_tokens

    with LocalOpenAIServer() as server:
        llm, embeddings = _models(server.base_url)
        rows = runner.evaluate(SAMPLES, _suite(llm, embeddings), max_concurrency=4)
        logged = [
            entry.body
            for entry in server.requests
            if entry.status == 200 and isinstance(entry.body, dict) and "messages" in entry.body
        ]
    errors = [
        f"{name}: {outcome}"
        for row in rows
        for name, outcome in row.results.items()
        if not hasattr(outcome, "score")
    ]
    requests = []
    for body in logged:
        contents = [_text(message.get("content")) for message in body["messages"]]
        schema = _schema_text(body)
        # As a provider sees the prompt for caching: tools first, then the messages.
        requests.append(
            {
                "step": _step(body),
                "messages": len(contents),
                "message_chars": sum(len(c) for c in contents),
                "prompt_chars": len(schema) + sum(len(c) for c in contents),
                "tokens": sum(approx_tokens(c) + 4 for c in contents),
                "rendered": schema + "\x00".join(contents),
            }
        )
    by_step: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for request in requests:
        by_step[request["step"]].append(request)
    steps = {}
    for step, group in sorted(by_step.items()):
        prefix = _common_prefix([r["rendered"] for r in group])
        count = len(group)
        steps[step] = {
            "requests": count,
            "message_chars": round(sum(r["message_chars"] for r in group) / count, 1),
            "prompt_chars": round(sum(r["prompt_chars"] for r in group) / count, 1),
            "tokens": round(sum(r["tokens"] for r in group) / count, 1),
            "static_prefix_chars": prefix,
            "static_share": round(
                sum(min(prefix, len(r["rendered"])) / len(r["rendered"]) for r in group) / count,
                3,
            ),
        }
    samples = len(SAMPLES)
    return {
        "samples": samples,
        "errors": errors,
        "requests_per_sample": round(len(requests) / samples, 3),
        "message_chars_per_sample": round(sum(r["message_chars"] for r in requests) / samples),
        "prompt_chars_per_sample": round(sum(r["prompt_chars"] for r in requests) / samples),
        "tokens_per_sample": round(sum(r["tokens"] for r in requests) / samples),
        "static_share_per_sample": round(
            sum(min(steps[r["step"]]["static_prefix_chars"], len(r["rendered"])) for r in requests)
            / sum(len(r["rendered"]) for r in requests),
            3,
        ),
        "steps": steps,
    }


# --------------------------------------------------------------------------- RAGAS

# ragas imports these at its top level; none of them takes part in rendering or sending
# the five metrics' prompts, so they are stood in for by empty modules.
_RAGAS_UNUSED = {
    "datasets",
    "instructor",
    "networkx",
    "typer",
    "rich",
    "sknetwork",
    "langchain_community",
    "PIL",
}


def _stub_ragas_imports() -> None:
    import importlib.abc
    import importlib.machinery
    import types

    class Anything(types.ModuleType):
        def __getattr__(self, name: str) -> Any:
            if name.startswith("__"):
                raise AttributeError(name)
            return type(
                name,
                (),
                {
                    "__init__": lambda self, *a, **k: None,
                    "__class_getitem__": classmethod(lambda cls, item: cls),
                },
            )

    class Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
            if name.split(".")[0] in _RAGAS_UNUSED:
                return importlib.machinery.ModuleSpec(name, self, is_package=True)
            return None

        def create_module(self, spec: Any) -> Any:
            module = Anything(spec.name)
            module.__path__ = []
            return module

        def exec_module(self, module: Any) -> None:
            return None

    sys.meta_path.insert(0, Finder())


def _sentences(text: str) -> list[str]:
    import re

    return [part for part in re.split(r"(?<=[.!?。！？])\s*", text) if part.strip()]


def ragas_responder(info: Any) -> dict[str, Any]:
    """Valid JSON for each RAGAS prompt the five metrics send, read from the prompt:
    claims and statements are the input's sentences, every verdict is 1."""
    prompt = "".join(str(m.get("content", "")) for m in info.messages)
    decoder = json.JSONDecoder()
    schema_at = prompt.index("JSON Schema:\n") + len("JSON Schema:\n")
    title = decoder.raw_decode(prompt, schema_at)[0].get("title")
    given = decoder.raw_decode(prompt, prompt.rindex("input: ") + len("input: "))[0]
    if title == "ClaimDecompositionOutput":
        return {"claims": _sentences(given["response"])}
    if title == "StatementGeneratorOutput":
        return {"statements": _sentences(given["answer"])}
    if title == "NLIStatementOutput":
        return {
            "statements": [
                {"statement": s, "reason": "r", "verdict": 1} for s in given["statements"]
            ]
        }
    if title == "ClassificationWithReason":
        return {
            "TP": [{"statement": s, "reason": "r"} for s in given["answer"]],
            "FP": [],
            "FN": [],
        }
    return {"reason": "r", "verdict": 1}


def measure_ragas(path: str) -> dict[str, Any]:
    """RAGAS's five metrics on :data:`SAMPLES`, through the same local server."""
    import asyncio

    _stub_ragas_imports()
    sys.path.insert(0, path)
    import ragas
    from ragas.dataset_schema import SingleTurnSample
    from ragas.embeddings import LangchainEmbeddingsWrapper
    from ragas.llms import LangchainLLMWrapper
    from ragas.metrics import (
        AnswerCorrectness,
        AspectCritic,
        FactualCorrectness,
        Faithfulness,
        SemanticSimilarity,
    )
    from ragas.run_config import RunConfig

    from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

    with LocalOpenAIServer(responder=ragas_responder) as server:
        llm, embeddings = _models(server.base_url)
        judge, embed = LangchainLLMWrapper(llm), LangchainEmbeddingsWrapper(embeddings)
        metrics = [
            FactualCorrectness(llm=judge),
            AnswerCorrectness(llm=judge, embeddings=embed),
            Faithfulness(llm=judge),
            SemanticSimilarity(embeddings=embed),
            AspectCritic(name="direct", definition=CRITERION, llm=judge),
        ]

        for metric in metrics:
            metric.init(RunConfig())  # what ragas.evaluate() does first

        async def score_all() -> list[float]:
            scores = []
            for sample in SAMPLES:
                turn = SingleTurnSample(**sample)
                for metric in metrics:
                    scores.append(await metric.single_turn_ascore(turn))
            return scores

        scores = asyncio.run(score_all())
        logged = [
            entry.body
            for entry in server.requests
            if entry.status == 200 and isinstance(entry.body, dict) and "messages" in entry.body
        ]
    chars = [
        len(_schema_text(body)) + sum(len(_text(m.get("content"))) for m in body["messages"])
        for body in logged
    ]
    samples = len(SAMPLES)
    return {
        "version": ragas.__version__,
        "scores": scores,
        "requests_per_sample": round(len(logged) / samples, 3),
        "prompt_chars_per_sample": round(sum(chars) / samples),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--package-root", help="import the package from this checkout")
    parser.add_argument("--json", help="also write the numbers to this file")
    parser.add_argument(
        "--synthetic",
        type=int,
        metavar="N",
        help="measure run_benchmark.py's first N synthetic samples (English, all distinct) "
        "instead of the fixed set",
    )
    parser.add_argument(
        "--ragas",
        help="a directory holding ragas (pip install --no-deps --target DIR "
        "ragas==0.4.3 tqdm appdirs diskcache nest-asyncio): measure its five metrics too",
    )
    args = parser.parse_args()
    if args.package_root:
        sys.path.insert(0, str(Path(args.package_root).resolve()))
    else:
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    os.environ.setdefault("LANGSMITH_TRACING", "false")
    if args.synthetic:
        sys.path.insert(1, str(Path(__file__).resolve().parent))
        from run_benchmark import synthetic_samples

        SAMPLES[:] = list(synthetic_samples(args.synthetic))
    result = measure()
    import langchain_answer_metrics

    result["package"] = str(Path(langchain_answer_metrics.__file__).parent)
    if args.ragas:
        ragas = measure_ragas(args.ragas)
        ragas_chars = ragas["prompt_chars_per_sample"]
        ragas["ratio_messages"] = round(result["message_chars_per_sample"] / ragas_chars, 3)
        ragas["ratio_with_schema"] = round(result["prompt_chars_per_sample"] / ragas_chars, 3)
        result["ragas"] = ragas
    print(json.dumps(result, indent=2, ensure_ascii=False))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
