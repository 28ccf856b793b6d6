"""Work is shared, never repeated: request counts on scripted models and the local server.

Within one runner call (or one ``batch`` call) an identical structured call is sent once,
even while it is still in flight; embeddings are batched across samples and sent once per
text. AspectCritic's votes go in one ``n``-choice request where the model supports it.
"""

from __future__ import annotations

import asyncio
import json
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import fact_judge, fact_responder, user_prompts
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_openai import ChatOpenAI

from langchain_answer_metrics import (
    AnswerCorrectness,
    AspectCritic,
    FactualCorrectness,
    Faithfulness,
    SemanticSimilarity,
)
from langchain_answer_metrics.judging.judges import Embedder, Judge
from langchain_answer_metrics.judging.schemas import ClaimList
from langchain_answer_metrics.judging.scope import RunScope, run_scope
from langchain_answer_metrics.judging.structured import ask_structured
from langchain_answer_metrics.run.runner import aevaluate, evaluate
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer, RequestInfo
from langchain_answer_metrics.testing.scripted import ScriptedChatModel, ScriptedEmbeddings

QUESTION = "Where is the Eiffel Tower?"
RESPONSE = "The Eiffel Tower is in Paris. It was built in 1889."
REFERENCE = "The Eiffel Tower stands in Paris, France. It was completed in 1889."
CONTEXTS = ["The Eiffel Tower is a landmark in Paris.", "Construction ended in 1889."]
SAMPLE = {
    "user_input": QUESTION,
    "response": RESPONSE,
    "reference": REFERENCE,
    "retrieved_contexts": CONTEXTS,
}


def sample(index: int, *, reference: str | None = None) -> dict[str, Any]:
    """A distinct sample (its own response and reference unless ``reference`` is given)."""
    return {
        "user_input": f"What happened in year {1800 + index}?",
        "response": f"Event {index} happened in {1800 + index}. It was in city {index}.",
        "reference": reference or f"Event {index} took place in {1800 + index}.",
        "retrieved_contexts": [f"Event {index} is recorded in {1800 + index}."],
    }


def claim_lists_for(model: ScriptedChatModel, text: str) -> int:
    """How many ClaimList requests decomposed exactly ``text``."""
    return sum(f"<text>\n{text}\n</text>" in prompt for prompt in user_prompts(model, "ClaimList"))


def five_metrics(llm: Any, embeddings: Any, *, strictness: int = 1) -> list[Any]:
    return [
        FactualCorrectness(llm=llm),
        AnswerCorrectness(llm=llm, embeddings=embeddings),
        Faithfulness(llm=llm),
        SemanticSimilarity(embeddings=embeddings),
        AspectCritic(llm=llm, name="has_year", criterion="It gives a year.", strictness=strictness),
    ]


# ---------------------------------------------------------------------- shared chat calls


def test_three_metrics_share_the_response_decomposition() -> None:
    judge = fact_judge()
    rows = evaluate(
        [SAMPLE],
        [
            FactualCorrectness(llm=judge),
            AnswerCorrectness(llm=judge, embeddings=ScriptedEmbeddings()),
            Faithfulness(llm=judge),
        ],
    )

    assert not rows[0].errors
    assert claim_lists_for(judge, RESPONSE) == 1
    assert claim_lists_for(judge, REFERENCE) == 1
    assert judge.calls_for("ClaimList") == 2
    # FactualCorrectness' two verifications (shared with AnswerCorrectness) + Faithfulness'.
    assert judge.calls_for("ClaimVerdicts") == 3


def test_answer_correctness_adds_no_requests_beside_its_components() -> None:
    def run(with_answer_correctness: bool) -> tuple[int, list[list[str]]]:
        judge, embeddings = fact_judge(), ScriptedEmbeddings()
        metrics: list[Any] = [
            FactualCorrectness(llm=judge),
            SemanticSimilarity(embeddings=embeddings),
        ]
        if with_answer_correctness:
            metrics.append(AnswerCorrectness(llm=judge, embeddings=embeddings))
        rows = evaluate([SAMPLE, sample(1)], metrics)
        assert not any(row.errors for row in rows)
        return len(judge.calls), embeddings.requests

    chat_alone, embedded_alone = run(False)
    chat_with, embedded_with = run(True)

    assert chat_with == chat_alone
    assert embedded_with == embedded_alone


def test_a_reference_repeated_across_samples_is_decomposed_once() -> None:
    judge = fact_judge()
    # The reference is decomposed with the question: the same pair, once.
    samples = [
        {**sample(index, reference=REFERENCE), "user_input": QUESTION} for index in range(20)
    ]

    rows = evaluate(samples, [FactualCorrectness(llm=judge)], max_concurrency=4)

    assert not any(row.errors for row in rows)
    assert claim_lists_for(judge, REFERENCE) == 1
    # Each response is still decomposed, once.
    assert judge.calls_for("ClaimList") == 20 + 1


def test_five_metric_suite_makes_at_most_six_chat_requests_per_sample() -> None:
    judge, embeddings = fact_judge(), ScriptedEmbeddings()
    count = 30

    rows = evaluate([sample(index) for index in range(count)], five_metrics(judge, embeddings))

    assert not any(row.errors for row in rows)
    assert len(judge.calls) / count <= 6
    # Per sample: 2 decompositions, 3 verifications (2 factual + 1 faithfulness), 1 verdict.
    assert judge.calls_for("ClaimList") == 2 * count
    assert judge.calls_for("ClaimVerdicts") == 3 * count
    assert judge.calls_for("AspectVerdict") == count


def test_embeddings_are_batched_across_samples_and_sent_once_per_text() -> None:
    judge, embeddings = fact_judge(), ScriptedEmbeddings()
    count = 200
    samples = [sample(index, reference=REFERENCE if index % 2 else None) for index in range(count)]
    metrics = [
        SemanticSimilarity(embeddings=embeddings),
        AnswerCorrectness(llm=judge, embeddings=embeddings),
    ]

    rows = evaluate(samples, metrics, max_concurrency=8)

    assert not any(row.errors for row in rows)
    assert len(embeddings.requests) / count <= 0.05
    assert all(len(batch) <= 128 for batch in embeddings.requests)
    sent = [text for batch in embeddings.requests for text in batch]
    assert len(sent) == len(set(sent)), "a text was embedded twice in one run"
    needed = {row[field] for row in samples for field in ("response", "reference")}
    assert set(sent) == needed


def test_a_stream_longer_than_the_window_keeps_embedding_batches_full() -> None:
    # Past the first window, samples start as earlier ones finish; started one at a time
    # they would each embed alone (~0.17 requests per sample with 2 texts each).
    embeddings = ScriptedEmbeddings()
    count = 700

    rows = evaluate(
        (sample(index) for index in range(count)),
        [SemanticSimilarity(embeddings=embeddings)],
        max_concurrency=4,
    )

    assert len(rows) == count and not any(row.errors for row in rows)
    assert len(embeddings.requests) / count <= 0.05


def test_embedding_batch_size_is_the_embedders() -> None:
    embeddings = ScriptedEmbeddings()
    metric = SemanticSimilarity(embeddings=Embedder(model=embeddings, batch_size=16))

    rows = evaluate([sample(index) for index in range(40)], [metric])

    assert not any(row.errors for row in rows)
    assert all(len(batch) <= 16 for batch in embeddings.requests)
    assert len(embeddings.requests) == 5  # 80 distinct texts


async def test_identical_calls_in_flight_are_sent_once() -> None:
    judge = ScriptedChatModel(responder=fact_responder(), model="judge-a", latency=0.05)
    messages = [SystemMessage("Decompose."), HumanMessage("<text>\nA is B. C is D.\n</text>")]

    with run_scope():
        replies = await asyncio.gather(
            *(
                ask_structured(Judge(model=judge), schema=ClaimList, messages=messages)
                for _ in range(5)
            )
        )

    assert len(judge.calls) == 1
    assert all(reply.parsed == replies[0].parsed for reply in replies)
    # The request is paid once: the sharers report no usage of their own.
    assert sum(reply.usage.requests for reply in replies) == 1


def test_identical_samples_in_one_run_share_calls_in_flight() -> None:
    judge = fact_judge(latency=0.05)

    rows = evaluate([SAMPLE, SAMPLE, SAMPLE], [FactualCorrectness(llm=judge)])

    assert [row.results["factual_correctness"].score for row in rows] == [
        rows[0].results["factual_correctness"].score
    ] * 3
    # 2 decompositions + 2 verifications, not 3 times that.
    assert len(judge.calls) == 4
    assert judge.max_in_flight >= 2  # the shared calls really overlapped


def test_judges_that_differ_only_in_model_name_do_not_share() -> None:
    first, second = fact_judge("gpt-4o"), fact_judge("gpt-4o-mini")

    rows = evaluate([SAMPLE], [FactualCorrectness(llm=[first, second])])

    assert not rows[0].errors
    assert len(first.calls) == len(second.calls) == 4


# ---------------------------------------------------------------------- batch calls


def test_batch_shares_within_one_call() -> None:
    judge = fact_judge()
    metric = FactualCorrectness(llm=judge)

    results = metric.batch(
        [{**sample(index, reference=REFERENCE), "user_input": QUESTION} for index in range(5)]
    )

    assert len(results) == 5
    assert claim_lists_for(judge, REFERENCE) == 1


async def test_abatch_shares_within_one_call() -> None:
    judge = fact_judge(latency=0.01)
    metric = FactualCorrectness(llm=judge)

    results = await metric.abatch([SAMPLE] * 4)

    assert len(results) == 4
    assert len(judge.calls) == 4


def test_separate_calls_do_not_share_without_a_cache() -> None:
    judge = fact_judge()
    metric = FactualCorrectness(llm=judge)

    metric.invoke(SAMPLE)
    metric.invoke(SAMPLE)
    metric.batch([SAMPLE])

    assert len(judge.calls) == 3 * 4
    assert claim_lists_for(judge, REFERENCE) == 3


async def test_separate_runner_calls_do_not_share_without_a_cache() -> None:
    judge = fact_judge()

    await aevaluate([SAMPLE], [FactualCorrectness(llm=judge)])
    await aevaluate([SAMPLE], [FactualCorrectness(llm=judge)])

    assert len(judge.calls) == 2 * 4


def test_a_scope_forgets_finished_calls_past_its_bound() -> None:
    scope = RunScope(max_shared=3)
    judge = fact_judge()

    async def ask(text: str) -> None:
        messages = [SystemMessage("Decompose."), HumanMessage(f"<text>\n{text}\n</text>")]
        await ask_structured(Judge(model=judge), schema=ClaimList, messages=messages)

    async def main() -> None:
        with run_scope(scope):
            for text in ("A b.", "C d.", "E f.", "G h.", "A b."):
                await ask(text)

    asyncio.run(main())

    assert len(scope.calls) == 3
    assert len(judge.calls) == 5  # "A b." was forgotten, so asked again


# ---------------------------------------------------------------------- AspectCritic votes


@pytest.fixture
def vote_server() -> Iterator[LocalOpenAIServer]:
    """A server whose i-th choice votes PASS, FAIL, PASS, FAIL, PASS."""

    def respond(info: RequestInfo) -> dict[str, Any]:
        verdict = "PASS" if info.choice_index % 2 == 0 else "FAIL"
        return {"reason": f"choice {info.choice_index} says {verdict}", "verdict": verdict}

    with LocalOpenAIServer(responder=respond) as server:
        yield server


def openai_judge(server: LocalOpenAIServer, **options: Any) -> ChatOpenAI:
    return ChatOpenAI(
        model=options.pop("model", "judge-a"),
        base_url=server.base_url,
        api_key="sk-test",
        use_responses_api=False,
        max_retries=0,
        **options,
    )


def test_strictness_three_sends_one_request_with_n_three(vote_server: LocalOpenAIServer) -> None:
    critic = AspectCritic(
        llm=openai_judge(vote_server, temperature=0.8),
        name="has_year",
        criterion="It gives a year.",
        strictness=3,
    )

    result = critic.invoke({"response": RESPONSE})

    assert vote_server.chat_requests == 1
    body = vote_server.requests[0].body
    assert body["n"] == 3
    assert body["tools"][0]["function"]["name"] == "AspectVerdict"
    details = result.details["models"]["judge-a"]
    assert details["votes"] == ["PASS", "FAIL", "PASS"]
    assert details["verdict"] == "PASS"
    assert details["reasons"] == ["choice 0 says PASS", "choice 1 says FAIL", "choice 2 says PASS"]
    assert result.score == 1.0
    assert "2 PASS / 1 FAIL" in result.reason


def test_strictness_in_the_runner_still_one_request_per_sample(
    vote_server: LocalOpenAIServer,
) -> None:
    critic = AspectCritic(
        llm=openai_judge(vote_server, temperature=0.8),
        name="has_year",
        criterion="It gives a year.",
        strictness=5,
    )

    rows = evaluate([sample(index) for index in range(6)], [critic], max_concurrency=3)

    assert vote_server.chat_requests == 6
    assert {entry.body["n"] for entry in vote_server.requests} == {5}
    assert all(
        row.results["has_year"].details["models"]["judge-a"]["votes"]
        == ["PASS", "FAIL", "PASS", "FAIL", "PASS"]
        for row in rows
    )


def test_strictness_one_sends_no_n(vote_server: LocalOpenAIServer) -> None:
    critic = AspectCritic(
        llm=openai_judge(vote_server), name="has_year", criterion="It gives a year."
    )

    critic.invoke({"response": RESPONSE})

    assert vote_server.chat_requests == 1
    assert vote_server.requests[0].body.get("n") in (None, 1)


def test_votes_without_n_go_as_parallel_separate_requests() -> None:
    judge = fact_judge(latency=0.05, votes=("FAIL", "PASS", "PASS"))
    critic = AspectCritic(llm=judge, name="has_year", criterion="It gives a year.", strictness=3)

    result = critic.invoke({"response": RESPONSE})

    assert judge.calls_for("AspectVerdict") == 3
    assert judge.max_in_flight == 3  # in parallel, not one after another
    prompts = user_prompts(judge, "AspectVerdict")
    assert len(set(prompts)) == 3  # each vote is its own call (and cache entry)
    details = result.details["models"]["judge-a"]
    assert details["votes"] == ["FAIL", "PASS", "PASS"]
    assert details["verdict"] == "PASS"


class IgnoresN(ScriptedChatModel):
    """Declares OpenAI's ``n`` but, like many gateways, returns one choice per request."""

    n: int = 1


def test_votes_from_a_model_that_ignores_n_are_asked_for_until_complete() -> None:
    verdicts = iter(["PASS", "FAIL", "FAIL", "PASS", "FAIL"])
    model = IgnoresN(
        responder=lambda schema, messages: {"reason": "r", "verdict": next(verdicts)},
        model="gateway-judge",
        temperature=0.7,
    )
    judge = Judge(model=model, method="function_calling")
    assert judge.can_sample_n
    critic = AspectCritic(llm=judge, name="x", criterion="c", strictness=5)

    result = critic.invoke({"response": RESPONSE})

    # Five single-choice replies, none malformed: no re-ask, no exclusion.
    assert len(model.calls) == 5
    assert result.excluded == []
    assert result.details["models"]["gateway-judge"]["votes"] == [
        "PASS",
        "FAIL",
        "FAIL",
        "PASS",
        "FAIL",
    ]
    assert result.score == 0.0


def test_a_judge_can_declare_n_support() -> None:
    judge = fact_judge(votes=("PASS", "PASS", "FAIL"))
    critic = AspectCritic(
        llm=Judge(model=judge, supports_n=False), name="x", criterion="c", strictness=3
    )

    critic.invoke({"response": RESPONSE})

    assert judge.calls_for("AspectVerdict") == 3


@pytest.mark.parametrize("model", ["scripted", "openai"])
def test_strictness_above_one_at_temperature_zero_warns(model: str) -> None:
    llm: Any = (
        ScriptedChatModel(responder=fact_responder(), temperature=0.0)
        if model == "scripted"
        else ChatOpenAI(
            model="judge-a",
            base_url="http://127.0.0.1:9/v1",
            api_key="sk-test",
            use_responses_api=False,
            temperature=0,
        )
    )

    with pytest.warns(UserWarning, match="temperature 0"):
        AspectCritic(llm=llm, name="x", criterion="c", strictness=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        AspectCritic(llm=llm, name="x", criterion="c", strictness=1)


def test_strictness_request_log_is_json_with_tool_choice(vote_server: LocalOpenAIServer) -> None:
    critic = AspectCritic(
        llm=openai_judge(vote_server, temperature=0.8), name="x", criterion="c", strictness=3
    )

    critic.invoke({"response": RESPONSE})

    body = vote_server.requests[0].body
    assert body["tool_choice"]["function"]["name"] == "AspectVerdict"
    json.dumps(body)  # the logged body is plain JSON
