"""Metrics as steps of chains and agents: (a) after a chain, (b) in parallel, (c) as an
agent's guard with a route on pass/fail, (d) with_config / with_retry / with_fallbacks."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from langchain_core.messages import BaseMessage
from langchain_core.runnables import (
    Runnable,
    RunnableBranch,
    RunnableLambda,
    RunnableParallel,
    RunnablePassthrough,
)
from langchain_core.tracers.context import collect_runs
from langchain_core.tracers.schemas import Run
from support import year_judge, year_reply

from langchain_answer_metrics import (
    AllModelsFailedError,
    AspectCritic,
    FactualCorrectness,
    Faithfulness,
    MetricResult,
    SampleMapping,
)
from langchain_answer_metrics.testing.scripted import ScriptedChatModel

DOCUMENTS = {
    "When was the Eiffel Tower built?": ["The Eiffel Tower was built in 1889 in Paris."],
    "Where is the Eiffel Tower?": ["The Eiffel Tower is in Paris, France."],
}


def retrieve(question: str) -> list[str]:
    return DOCUMENTS[question]


def generate(state: dict[str, Any]) -> str:
    # A careless generator: it adds an unsupported sentence unless told to stick to sources.
    answer = state["documents"][0]
    if state.get("feedback") is None and "built" in state["question"]:
        answer += " It was painted gold."
    return answer


# A small RAG chain: question -> {question, documents, answer}.
rag_chain: Runnable[Any, dict[str, Any]] = RunnableParallel(
    question=RunnablePassthrough(), documents=RunnableLambda(retrieve)
) | RunnablePassthrough.assign(answer=RunnableLambda(generate))

to_sample = SampleMapping.for_rows().as_runnable()


# --- (a) chain | to_sample | metric ------------------------------------------------------


def test_metric_piped_after_a_chain() -> None:
    pipeline = rag_chain | to_sample | Faithfulness(llm=year_judge())
    result = pipeline.invoke("When was the Eiffel Tower built?")
    assert isinstance(result, MetricResult)
    assert result.score == 0.5  # "It was painted gold." is not in the documents
    assert "It was painted gold." in result.reason
    assert pipeline.invoke("Where is the Eiffel Tower?").score == 1.0


async def test_metric_piped_after_a_chain_async_and_batched() -> None:
    pipeline = rag_chain | to_sample | Faithfulness(llm=year_judge())
    assert (await pipeline.ainvoke("Where is the Eiffel Tower?")).score == 1.0
    scores = [result.score for result in await pipeline.abatch(list(DOCUMENTS))]
    assert scores == [0.5, 1.0]
    assert [result.score for result in pipeline.batch(list(DOCUMENTS))] == [0.5, 1.0]


# --- (b) RunnableParallel over several metrics --------------------------------------------


def metric_panel() -> RunnableParallel[Any]:
    model = year_judge()
    return RunnableParallel(
        faithfulness=Faithfulness(llm=model),
        correctness=FactualCorrectness(llm=model, mode="precision"),
        has_date=AspectCritic(llm=model, name="has_date", criterion="It gives a year."),
    )


def test_parallel_metrics_on_one_sample() -> None:
    sample = {
        "response": "The Eiffel Tower was built in 1889.",
        "reference": "The Eiffel Tower was built in 1889 in Paris.",
        "retrieved_contexts": ["The Eiffel Tower was built in 1889 in Paris."],
    }
    results = metric_panel().invoke(sample)
    assert {key: result.score for key, result in results.items()} == {
        "faithfulness": 1.0,
        "correctness": 1.0,
        "has_date": 1.0,
    }
    assert results["has_date"].key == "has_date"


async def test_parallel_metrics_after_a_chain_async() -> None:
    to_full_sample = SampleMapping.for_rows(reference="documents.0").as_runnable()
    pipeline = rag_chain | to_full_sample | metric_panel()
    results = await pipeline.ainvoke("Where is the Eiffel Tower?")
    assert {key: result.score for key, result in results.items()} == {
        "faithfulness": 1.0,
        "correctness": 1.0,
        "has_date": 0.0,  # no year in "The Eiffel Tower is in Paris, France."
    }


# --- (c) an agent guard: answer -> Faithfulness -> route on pass/fail -----------------------


class CountingAgent:
    """The agent under guard: the RAG chain, counting how often it is asked."""

    def __init__(self) -> None:
        self.calls = 0
        self._lock = threading.Lock()

    def answer(self, state: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.calls += 1
        documents = retrieve(state["question"])
        feedback = state.get("feedback")
        text = generate(
            {"question": state["question"], "documents": documents, "feedback": feedback}
        )
        if state.get("stubborn"):
            text += " It was painted gold."
        return {**state, "documents": documents, "answer": text}


def build_guard(agent: CountingAgent, threshold: float = 1.0) -> Runnable[Any, Any]:
    faithfulness = Faithfulness(llm=year_judge(), threshold=threshold)
    answer = RunnableLambda(agent.answer, name="agent")
    check = RunnablePassthrough.assign(check=to_sample | faithfulness)

    def accept(state: dict[str, Any]) -> dict[str, Any]:
        return {"answer": state["answer"], "flagged": False, "score": state["check"].score}

    def flag(state: dict[str, Any]) -> dict[str, Any]:
        return {
            "answer": state["answer"],
            "flagged": True,
            "score": state["check"].score,
            "why": state["check"].reason,
        }

    def with_feedback(state: dict[str, Any]) -> dict[str, Any]:
        return {**state, "feedback": state["check"].reason}

    def passed(state: dict[str, Any]) -> bool:
        return bool(state["check"].passed)

    # Re-ask once with the judge's reason; if the answer still fails, flag it.
    reask = (
        RunnableLambda(with_feedback)
        | answer
        | check
        | RunnableBranch((passed, RunnableLambda(accept)), RunnableLambda(flag))
    )
    return answer | check | RunnableBranch((passed, RunnableLambda(accept)), reask)


def test_guard_accepts_a_faithful_answer() -> None:
    agent = CountingAgent()
    outcome = build_guard(agent).invoke({"question": "Where is the Eiffel Tower?"})
    assert outcome == {
        "answer": "The Eiffel Tower is in Paris, France.",
        "flagged": False,
        "score": 1.0,
    }
    assert agent.calls == 1


def test_guard_reasks_an_unfaithful_answer() -> None:
    agent = CountingAgent()
    outcome = build_guard(agent).invoke({"question": "When was the Eiffel Tower built?"})
    assert outcome == {
        "answer": "The Eiffel Tower was built in 1889 in Paris.",
        "flagged": False,
        "score": 1.0,
    }
    assert agent.calls == 2


async def test_guard_flags_an_answer_that_stays_unfaithful() -> None:
    agent = CountingAgent()
    outcome = await build_guard(agent).ainvoke(
        {"question": "Where is the Eiffel Tower?", "stubborn": True}
    )
    assert outcome["flagged"] is True
    assert outcome["score"] == 0.5
    assert "It was painted gold." in outcome["why"]
    assert agent.calls == 2


# --- (d) with_config, with_retry, with_fallbacks -------------------------------------------

SAMPLE = {
    "response": "The Eiffel Tower was built in 1889.",
    "retrieved_contexts": ["The Eiffel Tower was built in 1889 in Paris."],
}


def _names(run: Run) -> list[str]:
    return [run.name] + [name for child in run.child_runs for name in _names(child)]


def _tags(run: Run) -> list[list[str]]:
    return [run.tags or []] + [tags for child in run.child_runs for tags in _tags(child)]


def test_with_config_names_and_tags_the_run() -> None:
    metric = Faithfulness(llm=year_judge()).with_config(
        run_name="grounding_check", tags=["guard"], metadata={"team": "search"}
    )
    with collect_runs() as collected:
        assert metric.invoke(SAMPLE).score == 1.0
    (root,) = collected.traced_runs
    assert root.name == "grounding_check"
    assert {"decompose_claims", "verify_claims"} <= set(_names(root))
    assert all("guard" in tags for tags in _tags(root))  # tags propagate to every step
    assert root.metadata["team"] == "search"


class FlakyJudge:
    """Fails its first ``failures`` requests, then answers like the year judge."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self._lock = threading.Lock()

    def __call__(self, schema: str, messages: list[BaseMessage]) -> Any:
        with self._lock:
            self.failures -= 1
            if self.failures >= 0:
                return ConnectionError("judge unreachable")
        return year_reply(schema, messages)


def test_with_retry_retries_a_failed_metric() -> None:
    flaky = ScriptedChatModel(responder=FlakyJudge(failures=1), model="flaky")
    metric = Faithfulness(llm=flaky)
    with pytest.raises(AllModelsFailedError):
        metric.invoke(SAMPLE)  # the first request fails: no model left to score
    retrying = Faithfulness(llm=ScriptedChatModel(responder=FlakyJudge(failures=1))).with_retry(
        retry_if_exception_type=(AllModelsFailedError,),
        stop_after_attempt=2,
        wait_exponential_jitter=False,
    )
    assert retrying.invoke(SAMPLE).score == 1.0


async def test_with_retry_async() -> None:
    retrying = Faithfulness(llm=ScriptedChatModel(responder=FlakyJudge(failures=1))).with_retry(
        retry_if_exception_type=(AllModelsFailedError,),
        stop_after_attempt=2,
        wait_exponential_jitter=False,
    )
    assert (await retrying.ainvoke(SAMPLE)).score == 1.0


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_with_fallbacks_uses_the_backup_panel(mode: str) -> None:
    broken = ScriptedChatModel(responder=FlakyJudge(failures=10**6), model="primary")
    metric = Faithfulness(llm=broken).with_fallbacks(
        [Faithfulness(llm=year_judge("backup"))], exceptions_to_handle=(AllModelsFailedError,)
    )
    result = metric.invoke(SAMPLE) if mode == "sync" else await metric.ainvoke(SAMPLE)
    assert result.score == 1.0
    assert result.per_model == {"backup": 1.0}
