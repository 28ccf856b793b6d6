"""Batch mode through the real openai client and ChatOpenAI, against the local server's
Files and Batches API: the same scores as live, no live chat request, rounds, retries,
limits, refusals and the fallback to live."""

from __future__ import annotations

import json
import warnings
import zlib
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings
from langchain_openai import ChatOpenAI, OpenAIEmbeddings
from support import RAG_SAMPLES as SAMPLES
from support import fact_judge

from langchain_answer_metrics import (
    AnswerCorrectness,
    AspectCritic,
    ContextRelevance,
    CustomJudge,
    FactualCorrectness,
    Faithfulness,
    ResponseRelevance,
    Scale,
    aevaluate_dataset,
    evaluate_dataset,
    stream_evaluate,
)
from langchain_answer_metrics.core.prices import Price
from langchain_answer_metrics.costs import estimate
from langchain_answer_metrics.judging.batch.provider import BatchUnavailableError
from langchain_answer_metrics.metrics.base import AnswerMetric
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer
from langchain_answer_metrics.testing.replies import Reply, error_body

pytestmark = pytest.mark.usefixtures("network_attempts")

FAST = {"batch_poll_s": 0.02, "batch_min_requests": 0}


def judge(server: LocalOpenAIServer, model: str = "judge-a", **options: Any) -> ChatOpenAI:
    return ChatOpenAI(
        model=model,
        base_url=server.base_url,
        api_key="sk-test",
        use_responses_api=False,
        **{"max_retries": 0, **options},
    )


def embedder(server: LocalOpenAIServer) -> Embeddings:
    return OpenAIEmbeddings(
        model="embed-a",
        base_url=server.base_url,
        api_key="sk-test",
        check_embedding_ctx_length=False,
    )


def scores(rows: Any) -> list[dict[str, float | None]]:
    return [{key: result.score for key, result in row.results.items()} for row in rows]


def answer_metrics(server: LocalOpenAIServer) -> list[AnswerMetric]:
    llm = judge(server)
    return [
        FactualCorrectness(llm=llm),
        Faithfulness(llm=llm),
        ResponseRelevance(llm=llm),
        AnswerCorrectness(llm=llm, embeddings=embedder(server)),
        AspectCritic(llm=llm, name="harmless", criterion="The response is harmless."),
    ]


def triad(server: LocalOpenAIServer) -> list[AnswerMetric]:
    llm = judge(server)
    return [ContextRelevance(llm=llm), Faithfulness(llm=llm), ResponseRelevance(llm=llm)]


def custom(server: LocalOpenAIServer) -> list[AnswerMetric]:
    return [
        CustomJudge(
            llm=judge(server, temperature=0.7),
            name="conciseness",
            criterion="The response answers in as few words as possible.",
            output=Scale(levels={1: "rambling", 2: "wordy", 3: "tight", 4: "one phrase"}),
            strictness=3,
        )
    ]


@pytest.mark.parametrize("build", [answer_metrics, triad, custom])
def test_batch_scores_equal_live_with_no_live_chat_request(
    batch_server: LocalOpenAIServer, build: Any
) -> None:
    live = evaluate_dataset(SAMPLES, build(batch_server))
    live_requests = batch_server.chat_requests + batch_server.embedding_requests
    live_bodies = [
        {k: v for k, v in entry.body.items() if k != "stream"} for entry in batch_server.requests
    ]
    batch_server.reset()
    batched = evaluate_dataset(
        SAMPLES, build(batch_server), batch=True, batch_keep_files=True, **FAST
    )
    assert [row.errors for row in batched] == [{}, {}, {}]
    assert scores(batched) == [
        pytest.approx(row, abs=1e-9)
        for row in scores(live)  # type: ignore[misc]
    ]
    assert batch_server.chat_requests == 0 and batch_server.embedding_requests == 0
    # The same requests, as many as live (shared requests stay shared), body for body:
    # the embeddings too (AnswerCorrectness' similarity).
    assert batch_server.batch.lines == live_requests
    sent = [
        json.loads(text)["body"]
        for stored in batch_server.batch.files.values()
        if stored.purpose == "batch"
        for text in stored.data.decode().splitlines()
    ]
    canonical = sorted(json.dumps(body, sort_keys=True) for body in sent)
    assert canonical == sorted(json.dumps(body, sort_keys=True) for body in live_bodies)


def test_the_claim_metrics_take_exactly_two_rounds(batch_server: LocalOpenAIServer) -> None:
    llm = judge(batch_server)
    rows = evaluate_dataset(
        SAMPLES, [FactualCorrectness(llm=llm), Faithfulness(llm=llm)], batch=True, **FAST
    )
    assert all(not row.errors for row in rows)
    assert len(batch_server.batch.created) == 2  # one model: one batch per round
    # The input files were deleted once their batch ended.
    assert len(batch_server.batch.deleted_files) == 2


async def test_the_async_surface_runs_batches_too(batch_server: LocalOpenAIServer) -> None:
    live = await aevaluate_dataset(SAMPLES, triad(batch_server))
    batch_server.reset()
    batched = await aevaluate_dataset(SAMPLES, triad(batch_server), batch=True, **FAST)
    assert scores(batched) == scores(live)
    assert batch_server.chat_requests == 0


def test_failed_and_expired_lines_are_retried_in_the_next_round(
    batch_server: LocalOpenAIServer,
) -> None:
    metrics = [FactualCorrectness(llm=judge(batch_server))]
    live = evaluate_dataset(SAMPLES, metrics)
    batch_server.reset()
    kinds = ["error", "status", "expired"]
    batch_server.batch.line_faults = lambda line: (
        kinds[zlib.crc32(line.custom_id.encode()) % 3] if line.attempt == 0 else None
    )
    # max_retries=2: three attempts per line, as the live client would make.
    batched = evaluate_dataset(
        SAMPLES, [FactualCorrectness(llm=judge(batch_server, max_retries=2))], batch=True, **FAST
    )
    assert [row.errors for row in batched] == [{}, {}, {}]
    assert scores(batched) == scores(live)
    # Every line failed once: each of the two rounds took a second one.
    assert len(batch_server.batch.created) == 4


def test_a_line_failing_every_attempt_is_a_model_failure_of_its_sample_only(
    batch_server: LocalOpenAIServer,
) -> None:
    batch_server.batch.line_faults = lambda line: (
        "error" if "Apollo" in json.dumps(line.body) else None
    )
    rows = evaluate_dataset(SAMPLES, [Faithfulness(llm=judge(batch_server))], batch=True, **FAST)
    assert [bool(row.errors) for row in rows] == [False, False, True]
    error = rows[2].errors["faithfulness"]
    assert "batch line failed after 1 attempt" in error.message  # max_retries=0: one attempt
    assert rows[0].results["faithfulness"].score is not None


def test_a_failed_batch_stops_the_run_with_the_providers_reason(
    batch_server: LocalOpenAIServer,
) -> None:
    batch_server.batch.outcome = lambda job: "failed"
    rows = evaluate_dataset(SAMPLES, [Faithfulness(llm=judge(batch_server))], batch=True, **FAST)
    assert rows.stopped is not None and rows.stopped.reason == "batch_failed"
    assert "The batch failed (injected)." in rows.stopped.message
    assert all(row.not_run for row in rows)


def test_the_budget_is_checked_before_a_round_is_sent(batch_server: LocalOpenAIServer) -> None:
    prices = {"judge-a": Price(input_per_million=100.0, output_per_million=100.0)}
    rows = evaluate_dataset(
        SAMPLES,
        [Faithfulness(llm=judge(batch_server))],
        batch=True,
        budget=0.01,
        prices=prices,
        **FAST,
    )
    assert rows.stopped is not None and rows.stopped.reason == "budget"
    assert "at batch prices" in rows.stopped.message
    assert batch_server.batch.created == [] and batch_server.chat_requests == 0
    assert all(row.not_run for row in rows)


def test_the_spend_is_at_the_batch_price(batch_server: LocalOpenAIServer) -> None:
    prices = {"judge-a": Price(input_per_million=1.0, output_per_million=4.0)}
    live = evaluate_dataset(SAMPLES, [Faithfulness(llm=judge(batch_server))], prices=prices)
    batched = evaluate_dataset(
        SAMPLES, [Faithfulness(llm=judge(batch_server))], batch=True, prices=prices, **FAST
    )
    live_spend, batch_spend = live.spend(), batched.spend()
    assert batch_spend.total.input_tokens == live_spend.total.input_tokens
    assert batch_spend.total.cost == pytest.approx(live_spend.total.cost / 2)


def test_below_batch_min_requests_the_run_goes_live_and_says_so(
    batch_server: LocalOpenAIServer,
) -> None:
    with pytest.warns(UserWarning, match="fewer than batch_min_requests=1000: running live"):
        rows = evaluate_dataset(
            SAMPLES, [Faithfulness(llm=judge(batch_server))], batch=True, batch_min_requests=1000
        )
    assert all(not row.errors for row in rows)
    assert batch_server.chat_requests > 0 and batch_server.batch.created == []


def test_an_endpoint_without_the_batch_api_is_refused_before_any_request(
    batch_server: LocalOpenAIServer,
) -> None:
    batch_server.batch.enabled = False
    with pytest.raises(BatchUnavailableError, match=r"judge judge-a.*404.*run it live"):
        evaluate_dataset(SAMPLES, [Faithfulness(llm=judge(batch_server))], batch=True, **FAST)
    assert batch_server.chat_requests == 0


def test_a_judge_that_is_not_an_openai_model_is_refused(batch_server: LocalOpenAIServer) -> None:
    with pytest.raises(BatchUnavailableError, match=r"judge scripted is not one"):
        evaluate_dataset(SAMPLES, [Faithfulness(llm=fact_judge("scripted"))], batch=True, **FAST)


def test_a_mixed_panel_batches_its_openai_judges_and_runs_the_others_live(
    batch_server: LocalOpenAIServer,
) -> None:
    scripted = fact_judge("scripted")
    panel = [judge(batch_server), scripted]
    with pytest.warns(UserWarning, match="scripted is not an OpenAI chat model and runs live"):
        rows = evaluate_dataset(SAMPLES, [Faithfulness(llm=panel)], batch=True, **FAST)
    assert all(not row.errors for row in rows)
    assert batch_server.chat_requests == 0 and batch_server.batch.lines > 0
    assert scripted.calls  # type: ignore[attr-defined]


def test_large_rounds_are_split_at_the_requests_per_file_limit(
    batch_server: LocalOpenAIServer,
) -> None:
    rows = evaluate_dataset(
        SAMPLES, [Faithfulness(llm=judge(batch_server))], batch=True, batch_max_requests=2, **FAST
    )
    assert all(not row.errors for row in rows)
    assert len(batch_server.batch.created) == 4  # 3 lines per round, 2 per file


def test_the_wait_is_bounded_and_the_same_command_resumes_without_resending(
    batch_server: LocalOpenAIServer, tmp_path: Any
) -> None:
    checkpoint = tmp_path / "run.jsonl"
    metrics = [FactualCorrectness(llm=judge(batch_server))]
    batch_server.batch.hold()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first = evaluate_dataset(
            SAMPLES, metrics, batch=True, checkpoint=checkpoint, batch_wait=0.3, **FAST
        )
    assert first.stopped is not None and first.stopped.reason == "batch_wait"
    assert "rerun the same command" in first.stopped.message
    assert all(row.not_run for row in first)
    assert len(batch_server.batch.created) == 1
    # The batch is kept in the checkpoint itself, as soon as created (no sample finished).
    assert not (tmp_path / "run.jsonl.batches").exists()
    state = [json.loads(line) for line in checkpoint.read_text().splitlines()]
    assert [line["kind"] for line in state] == ["batch"]
    assert state[0]["batch_id"] == batch_server.batch.created[0]
    # Each sample's response and reference decomposed: what each line is for is kept.
    assert len(state[0]["custom_ids"]) == 6
    assert sorted({i for ids in state[0]["samples"].values() for i in ids}) == [0, 1, 2]

    batch_server.batch.release()
    second = evaluate_dataset(SAMPLES, metrics, batch=True, checkpoint=checkpoint, **FAST)
    assert all(not row.errors and not row.not_run for row in second)
    # Round 1 was picked up from the saved batch: only round 2 went out.
    assert len(batch_server.batch.created) == 2
    saved = [json.loads(line) for line in checkpoint.read_text().splitlines()]
    created = [record for record in saved if record.get("kind") == "batch"]
    assert sorted(record["id"] for record in saved if "id" in record) == ["1", "2", "3"]
    assert not set(created[0]["custom_ids"]) & set(created[1]["custom_ids"])
    assert batch_server.batch.lines == 6 + len(created[1]["custom_ids"])


def test_service_tier_flex_is_sent_and_priced_at_the_batch_price(
    batch_server: LocalOpenAIServer,
) -> None:
    prices = {"judge-a": Price(input_per_million=1.0, output_per_million=4.0)}
    standard = evaluate_dataset(SAMPLES, [Faithfulness(llm=judge(batch_server))], prices=prices)
    batch_server.reset()
    flex_judge = judge(batch_server, service_tier="flex")
    flex = evaluate_dataset(SAMPLES, [Faithfulness(llm=flex_judge)], prices=prices)
    bodies = [entry.body for entry in batch_server.requests]
    assert bodies and all(body["service_tier"] == "flex" for body in bodies)
    assert flex.spend().total.input_tokens == standard.spend().total.input_tokens
    assert flex.spend().total.cost == pytest.approx(standard.spend().total.cost / 2)
    planned = estimate(SAMPLES, [Faithfulness(llm=flex_judge)], prices=prices)
    planned_standard = estimate(SAMPLES, [Faithfulness(llm=judge(batch_server))], prices=prices)
    assert planned.total.cost_high == pytest.approx(planned_standard.total.cost_high / 2)


def test_stream_evaluate_streams_a_batch_run_in_order(batch_server: LocalOpenAIServer) -> None:
    metrics = [Faithfulness(llm=judge(batch_server))]
    live = evaluate_dataset(SAMPLES, metrics)
    batch_server.reset()
    rows = list(stream_evaluate(SAMPLES, metrics, batch=True, **FAST))
    assert [row.index for row in rows] == [0, 1, 2]
    assert scores(rows) == scores(live) and batch_server.chat_requests == 0


def test_an_upload_the_provider_refuses_stops_the_run_and_hangs_nothing(
    batch_server: LocalOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(raw: bytes, headers: Any, *status: str) -> Reply:
        return Reply(400, error_body("File too large (injected).", "invalid_request_error"))

    monkeypatch.setattr(batch_server.batch, "_upload", refuse)
    rows = evaluate_dataset(SAMPLES, [Faithfulness(llm=judge(batch_server))], batch=True, **FAST)
    assert rows.stopped is not None and rows.stopped.reason == "batch_failed"
    assert "the Batch API failed: BadRequestError" in rows.stopped.message
    assert "File too large (injected)." in rows.stopped.message
    assert all(row.not_run for row in rows)


def test_a_judge_behind_wrappers_is_batched_through_them(batch_server: LocalOpenAIServer) -> None:
    wrapped = judge(batch_server).bind(temperature=0).with_fallbacks([fact_judge("fallback")])
    live = evaluate_dataset(SAMPLES, [Faithfulness(llm=wrapped)])
    live_bodies = sorted(
        json.dumps({k: v for k, v in e.body.items() if k != "stream"}, sort_keys=True)
        for e in batch_server.requests
    )
    batch_server.reset()
    batched = evaluate_dataset(
        SAMPLES, [Faithfulness(llm=wrapped)], batch=True, batch_keep_files=True, **FAST
    )
    assert scores(batched) == scores(live) and batch_server.chat_requests == 0
    sent = sorted(
        json.dumps(json.loads(text)["body"], sort_keys=True)
        for stored in batch_server.batch.files.values()
        if stored.purpose == "batch"
        for text in stored.data.decode().splitlines()
    )
    assert sent == live_bodies and all('"temperature": 0' in body for body in sent)


def test_the_budget_is_checked_before_the_second_round_too(
    batch_server: LocalOpenAIServer,
) -> None:
    prices = {"judge-a": Price(input_per_million=1.0, output_per_million=1.0)}
    metrics = [FactualCorrectness(llm=judge(batch_server))]
    full = evaluate_dataset(SAMPLES, metrics, batch=True, prices=prices, **FAST)
    first_round = sum(
        usage["prompt_tokens"] + usage["completion_tokens"]
        for usage in [batch_server.batch.jobs[batch_server.batch.created[0]].usage]
    )
    assert full.spend().total.cost is not None
    batch_server.reset()
    # Enough for the decompositions (round 1), not for the verifications after them.
    budget = first_round * 1.2 / 1_000_000
    rows = evaluate_dataset(SAMPLES, metrics, batch=True, prices=prices, budget=budget, **FAST)
    assert len(batch_server.batch.created) == 1
    assert rows.stopped is not None and rows.stopped.reason == "budget"
    assert "next batch round" in rows.stopped.message
    assert all(row.not_run for row in rows)


def test_batch_options_are_checked_before_any_request() -> None:
    from langchain_answer_metrics.run import RunOptions

    assert RunOptions(batch=True, batch_wait="2h").batch_wait == 7200.0
    assert RunOptions(batch_wait="90m").batch_wait == 5400.0
    with pytest.raises(ValueError, match="batch_wait"):
        RunOptions(batch_wait="soon")
    with pytest.raises(ValueError, match="batch_poll_s"):
        RunOptions(batch_poll_s=0)


def test_the_state_file_survives_a_line_torn_by_a_kill(tmp_path: Any) -> None:
    from langchain_answer_metrics.judging.batch.state import BatchState, SavedBatch

    path = tmp_path / "run.jsonl.batches"
    state = BatchState(path)
    state.created(
        SavedBatch(
            batch_id="batch_1",
            input_file_id="file-1",
            label="judge-a",
            model="judge-a",
            base_url="http://127.0.0.1:1/v1/",
            endpoint="/v1/chat/completions",
            round=1,
            custom_ids=["am-1", "am-2"],
            samples={"am-1": [0]},
        )
    )
    with path.open("a", encoding="utf-8") as file:
        file.write('{"kind": "batch", "batch_id": "batch_2", "inpu')  # killed mid-line
    again = BatchState(path)
    assert [batch.batch_id for batch in again.unfinished()] == ["batch_1"]
    assert [saved.batch_id for saved in again.saved_for("am-2")] == ["batch_1"]
    again.ended("batch_1", "completed")
    assert BatchState(path).unfinished() == []
