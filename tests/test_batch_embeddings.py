"""Batch mode's embeddings, through the real openai client and OpenAIEmbeddings against the
local server: embeddings lines in the same rounds as the chat lines, no live embedding
request, the same scores as live, batch prices, ``batch_embeddings=False``, an endpoint
that refuses embeddings batches; and a mixed panel's budget counting the live judge."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_openai import ChatOpenAI, OpenAIEmbeddings
from support import fact_judge

from langchain_answer_metrics import (
    AnswerCorrectness,
    FactualCorrectness,
    Faithfulness,
    SemanticSimilarity,
    aevaluate_dataset,
    evaluate_dataset,
)
from langchain_answer_metrics.core.prices import Price
from langchain_answer_metrics.metrics.base import AnswerMetric
from langchain_answer_metrics.run.spend import batch_labels
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

pytestmark = pytest.mark.usefixtures("network_attempts")

SAMPLES: list[dict[str, Any]] = [
    {
        "question": "Who was Albert Einstein?",
        "answer": "Einstein was a physicist. He was born in Germany in 1879.",
        "ground_truth": "Albert Einstein was a German-born theoretical physicist, born in 1879.",
        "contexts": ["Albert Einstein, born 1879 in Ulm, Germany, was a theoretical physicist."],
    },
    {
        "question": "What is the capital of France?",
        "answer": "Paris is the capital of France. It lies on the Seine.",
        "ground_truth": "Paris is the capital of France.",
        "contexts": ["Paris, on the Seine, is the capital and largest city of France."],
    },
    {
        "question": "When did the Apollo 11 mission land on the Moon?",
        "answer": "Apollo 11 landed in 1969. Neil Armstrong walked on the Moon first.",
        "ground_truth": "Apollo 11 landed on the Moon on 20 July 1969.",
        "contexts": ["Apollo 11 landed on 20 July 1969; Armstrong stepped out first."],
    },
]
FAST = {"batch_poll_s": 0.02, "batch_min_requests": 0}
PRICES = {
    "judge-a": Price(input_per_million=1.0, output_per_million=4.0),
    "embed-a": Price(input_per_million=2.0),
}


@pytest.fixture
def batch_server(server: LocalOpenAIServer) -> Iterator[LocalOpenAIServer]:
    yield server
    batch = server.batch
    batch.enabled, batch.delay, batch.line_faults, batch.outcome = True, 0.0, None, None
    batch.endpoints = ("chat/completions", "embeddings")
    batch.release()


def judge(server: LocalOpenAIServer) -> ChatOpenAI:
    return ChatOpenAI(
        model="judge-a",
        base_url=server.base_url,
        api_key="sk-test",
        use_responses_api=False,
        max_retries=0,
    )


def embedder(server: LocalOpenAIServer, **options: Any) -> OpenAIEmbeddings:
    return OpenAIEmbeddings(
        model="embed-a",
        base_url=server.base_url,
        api_key="sk-test",
        **{"check_embedding_ctx_length": False, **options},
    )


def metrics(server: LocalOpenAIServer, **options: Any) -> list[AnswerMetric]:
    """Two metrics on one embedding model (their texts shared), beside claim metrics."""
    embeddings = embedder(server, **options)
    llm = judge(server)
    return [
        SemanticSimilarity(embeddings=embeddings),
        AnswerCorrectness(llm=llm, embeddings=embeddings),
        FactualCorrectness(llm=llm),
    ]


def scores(rows: Any) -> list[dict[str, float | None]]:
    return [{key: result.score for key, result in row.results.items()} for row in rows]


def live_bodies(server: LocalOpenAIServer, route: str) -> list[str]:
    return sorted(
        json.dumps({k: v for k, v in e.body.items() if k != "stream"}, sort_keys=True)
        for e in server.requests
        if e.path.endswith(route)
    )


def batch_bodies(server: LocalOpenAIServer, endpoint: str) -> list[str]:
    return sorted(
        json.dumps(json.loads(text)["body"], sort_keys=True)
        for stored in server.batch.files.values()
        if stored.purpose == "batch"
        for text in stored.data.decode().splitlines()
        if json.loads(text)["url"] == endpoint
    )


def rounds_of(server: LocalOpenAIServer) -> dict[str, set[str]]:
    """Per batch endpoint, the rounds its batches went out in."""
    found: dict[str, set[str]] = {}
    for job in server.batch.jobs.values():
        found.setdefault(job.endpoint, set()).add((job.metadata or {})["answer_metrics_round"])
    return found


def test_embeddings_go_out_in_the_same_rounds_with_no_live_request(
    batch_server: LocalOpenAIServer,
) -> None:
    live = evaluate_dataset(SAMPLES, metrics(batch_server), prices=PRICES)
    embeddings_live = batch_server.embedding_requests
    chat_live = batch_server.chat_requests
    bodies = live_bodies(batch_server, "/embeddings")
    assert embeddings_live > 0
    batch_server.reset()

    batched = evaluate_dataset(
        SAMPLES, metrics(batch_server), batch=True, batch_keep_files=True, prices=PRICES, **FAST
    )
    assert [row.errors for row in batched] == [{}, {}, {}]
    assert scores(batched) == [pytest.approx(row, abs=1e-9) for row in scores(live)]  # type: ignore[misc]
    assert batch_server.embedding_requests == 0 and batch_server.chat_requests == 0
    # The same embedding requests as live, body for body (base64 vectors, as the
    # openai client asks for them), as many (texts shared across the two metrics).
    assert batch_bodies(batch_server, "/v1/embeddings") == bodies
    assert batch_server.batch.lines == chat_live + embeddings_live
    # Embeddings are ready at once: they went out in round 1, beside the decompositions,
    # one batch per endpoint; the claim metrics' verifications took round 2.
    assert rounds_of(batch_server) == {"/v1/chat/completions": {"1", "2"}, "/v1/embeddings": {"1"}}
    # Paid at the batch price: half of the live spend, embeddings included.
    live_spend, batch_spend = live.spend(), batched.spend()
    assert batch_spend.models["embed-a"].cost == pytest.approx(
        live_spend.models["embed-a"].cost / 2
    )
    assert batch_spend.total.cost == pytest.approx(live_spend.total.cost / 2)


async def test_the_async_surface_batches_embeddings_too(batch_server: LocalOpenAIServer) -> None:
    live = await aevaluate_dataset(SAMPLES, metrics(batch_server)[:1])
    batch_server.reset()
    batched = await aevaluate_dataset(SAMPLES, metrics(batch_server)[:1], batch=True, **FAST)
    assert scores(batched) == scores(live)
    assert batch_server.embedding_requests == 0 and len(batch_server.batch.created) == 1


def test_a_float_encoding_the_user_asked_for_is_kept(batch_server: LocalOpenAIServer) -> None:
    asked = {"model_kwargs": {"encoding_format": "float"}}
    live = evaluate_dataset(SAMPLES, metrics(batch_server, **asked)[:1])
    batch_server.reset()
    batched = evaluate_dataset(
        SAMPLES, metrics(batch_server, **asked)[:1], batch=True, batch_keep_files=True, **FAST
    )
    assert scores(batched) == scores(live)
    sent = [json.loads(body) for body in batch_bodies(batch_server, "/v1/embeddings")]
    assert sent and all(body["encoding_format"] == "float" for body in sent)


def test_batch_embeddings_false_sends_them_live_at_the_live_price(
    batch_server: LocalOpenAIServer,
) -> None:
    live = evaluate_dataset(SAMPLES, metrics(batch_server), prices=PRICES)
    embeddings_live = batch_server.embedding_requests
    batch_server.reset()
    batched = evaluate_dataset(
        SAMPLES,
        metrics(batch_server),
        batch=True,
        batch_embeddings=False,
        prices=PRICES,
        **FAST,
    )
    assert scores(batched) == [pytest.approx(row, abs=1e-9) for row in scores(live)]  # type: ignore[misc]
    assert batch_server.embedding_requests == embeddings_live and batch_server.chat_requests == 0
    assert "/v1/embeddings" not in rounds_of(batch_server)
    spend, live_spend = batched.spend(), live.spend()
    assert spend.models["embed-a"].cost == pytest.approx(live_spend.models["embed-a"].cost)
    assert spend.models["judge-a"].cost == pytest.approx(live_spend.models["judge-a"].cost / 2)
    # What the CLI's --estimate and --max-cost price at the batch price.
    assert set(batch_labels(metrics(batch_server))) == {"judge-a", "embed-a"}
    assert batch_labels(metrics(batch_server), embeddings=False) == ["judge-a"]


def test_only_embeddings_kept_live_is_no_batch_run(batch_server: LocalOpenAIServer) -> None:
    from langchain_answer_metrics.judging.batch.provider import BatchUnavailableError

    with pytest.raises(BatchUnavailableError, match=r"embedder embed-a is sent live"):
        evaluate_dataset(
            SAMPLES, metrics(batch_server)[:1], batch=True, batch_embeddings=False, **FAST
        )
    assert batch_server.embedding_requests == 0


def test_an_endpoint_refusing_embeddings_batches_sends_them_live_saying_so(
    batch_server: LocalOpenAIServer,
) -> None:
    live = evaluate_dataset(SAMPLES, metrics(batch_server), prices=PRICES)
    embeddings_live = batch_server.embedding_requests
    batch_server.reset()
    batch_server.batch.endpoints = ("chat/completions",)  # a provider without them
    with pytest.warns(
        UserWarning, match=r"refused an embeddings batch of embed-a \(400: .*sent live"
    ):
        batched = evaluate_dataset(
            SAMPLES, metrics(batch_server), batch=True, prices=PRICES, **FAST
        )
    assert [row.errors for row in batched] == [{}, {}, {}]
    assert scores(batched) == [pytest.approx(row, abs=1e-9) for row in scores(live)]  # type: ignore[misc]
    # The embeddings went live (once each), the judge's requests still through batches.
    assert batch_server.embedding_requests == embeddings_live and batch_server.chat_requests == 0
    assert rounds_of(batch_server) == {"/v1/chat/completions": {"1", "2"}}
    # The refused input file is not left at the provider.
    uploaded = [f for f in batch_server.batch.files.values() if f.purpose == "batch"]
    assert len(uploaded) == 0
    # Paid live for the embeddings, at the batch price for the judge.
    spend, live_spend = batched.spend(), live.spend()
    assert spend.models["embed-a"].cost == pytest.approx(live_spend.models["embed-a"].cost)
    assert spend.models["judge-a"].cost == pytest.approx(live_spend.models["judge-a"].cost / 2)


def test_a_mixed_panels_budget_counts_the_live_judges_spend(
    batch_server: LocalOpenAIServer,
) -> None:
    prices = {
        "judge-a": Price(input_per_million=1.0, output_per_million=1.0),
        "scripted": Price(input_per_million=100.0, output_per_million=100.0),
    }

    def panel() -> list[AnswerMetric]:
        return [Faithfulness(llm=[judge(batch_server), fact_judge("scripted")])]

    with pytest.warns(UserWarning, match="scripted is not an OpenAI chat model"):
        full = evaluate_dataset(SAMPLES, panel(), batch=True, prices=prices, **FAST)
    spend = full.spend()
    live_cost, batch_cost = spend.models["scripted"].cost, spend.models["judge-a"].cost
    assert live_cost is not None and batch_cost is not None and live_cost > 10 * batch_cost
    batch_server.reset()
    # The live judge has spent all it will by the time round 1 would go out: enough budget
    # for that live spend, or for round 1 alone, not for both.
    budget = live_cost + batch_cost / 100
    with pytest.warns(UserWarning, match="scripted is not an OpenAI chat model"):
        rows = evaluate_dataset(SAMPLES, panel(), batch=True, prices=prices, budget=budget, **FAST)
    assert rows.stopped is not None and rows.stopped.reason == "budget"
    assert "next batch round" in rows.stopped.message
    spent = float(rows.stopped.message.split("after $")[1].split(" spent")[0])
    assert spent == pytest.approx(live_cost, abs=1e-4)
    assert f"${live_cost:.4f} of it live" in rows.stopped.message
    assert batch_server.batch.created == []


def test_the_live_embedders_spend_counts_in_the_budget_too(
    batch_server: LocalOpenAIServer,
) -> None:
    prices = {
        "judge-a": Price(input_per_million=0.01, output_per_million=0.01),
        "embed-a": Price(input_per_million=1000.0),
    }
    full = evaluate_dataset(
        SAMPLES, metrics(batch_server), batch=True, batch_embeddings=False, prices=prices, **FAST
    )
    embed_cost = full.spend().models["embed-a"].cost
    assert embed_cost
    batch_server.reset()
    rows = evaluate_dataset(
        SAMPLES,
        metrics(batch_server),
        batch=True,
        batch_embeddings=False,
        prices=prices,
        budget=embed_cost * 0.999,
        **FAST,
    )
    assert rows.stopped is not None and rows.stopped.reason == "budget"
    assert batch_server.batch.created == []


def test_an_embedding_model_that_is_not_openais_runs_live_saying_so(
    batch_server: LocalOpenAIServer,
) -> None:
    from langchain_core.embeddings import DeterministicFakeEmbedding

    local = DeterministicFakeEmbedding(size=16)
    chosen = [Faithfulness(llm=judge(batch_server)), SemanticSimilarity(embeddings=local)]
    live = evaluate_dataset(SAMPLES, chosen)
    batch_server.reset()
    with pytest.warns(UserWarning, match="embedder .* is not an OpenAI embeddings model"):
        rows = evaluate_dataset(SAMPLES, chosen, batch=True, **FAST)
    assert scores(rows) == scores(live)
    assert batch_server.chat_requests == 0 and rounds_of(batch_server) == {
        "/v1/chat/completions": {"1", "2"}
    }


def test_token_id_requests_of_the_default_settings_are_batched_as_sent_live(
    batch_server: LocalOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OpenAIEmbeddings' default (``check_embedding_ctx_length=True``) sends token ids;
    a byte-level tiktoken encoding stands for the one it would download."""
    import tiktoken

    offline = tiktoken.Encoding(
        name="bytes",
        pat_str=r"\S+|\s+",
        mergeable_ranks={bytes([byte]): byte for byte in range(256)},
        special_tokens={},
    )
    monkeypatch.setattr(tiktoken, "encoding_for_model", lambda name: offline)
    monkeypatch.setattr(tiktoken, "get_encoding", lambda name: offline)

    def by_tokens() -> list[AnswerMetric]:
        return metrics(batch_server, check_embedding_ctx_length=True)[:1]

    live = evaluate_dataset(SAMPLES, by_tokens())
    bodies = live_bodies(batch_server, "/embeddings")
    assert bodies and all(isinstance(json.loads(b)["input"][0], list) for b in bodies)
    batch_server.reset()
    batched = evaluate_dataset(SAMPLES, by_tokens(), batch=True, batch_keep_files=True, **FAST)
    assert scores(batched) == scores(live) and batch_server.embedding_requests == 0
    assert batch_bodies(batch_server, "/v1/embeddings") == bodies


def test_a_round_of_embeddings_is_estimated_and_checked_against_the_budget(
    batch_server: LocalOpenAIServer,
) -> None:
    prices = {"embed-a": Price(input_per_million=1000.0)}
    full = evaluate_dataset(SAMPLES, metrics(batch_server)[:1], batch=True, prices=prices, **FAST)
    paid = full.spend().models["embed-a"].cost
    assert paid
    batch_server.reset()
    rows = evaluate_dataset(
        SAMPLES, metrics(batch_server)[:1], batch=True, prices=prices, budget=paid / 4, **FAST
    )
    assert rows.stopped is not None and rows.stopped.reason == "budget"
    estimated = float(rows.stopped.message.split("(about $")[1].split(" ")[0])
    assert estimated == pytest.approx(paid, rel=0.5)  # the texts' tokens, at batch prices
    assert batch_server.batch.created == [] and batch_server.embedding_requests == 0
