"""``chain | metric`` where the chain's output names its fields as a RAG chain does
(``question``, ``answer``, ``context``): the error names the fix, and the fix scores."""

from __future__ import annotations

import pytest
from langchain_core.runnables import RunnableLambda
from langchain_openai import ChatOpenAI

from langchain_answer_metrics import Faithfulness, InvalidSampleError, SampleMapping
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer


def rag_chain() -> RunnableLambda:
    return RunnableLambda(
        lambda question: {
            "question": question,
            "answer": "The Eiffel Tower is in Paris.",
            "context": ["The Eiffel Tower stands in Paris, France."],
        }
    )


def judge(server: LocalOpenAIServer) -> ChatOpenAI:
    return ChatOpenAI(
        base_url=server.base_url, api_key="sk-test", model="judge", use_responses_api=False
    )


def test_a_rag_chains_output_names_the_mapping_to_use(server: LocalOpenAIServer) -> None:
    with pytest.raises(InvalidSampleError) as raised:
        (rag_chain() | Faithfulness(llm=judge(server))).invoke("Where is the Eiffel Tower?")
    assert "'answer' is not a sample field" in str(raised.value)
    assert "SampleMapping.for_rows().as_runnable()" in str(raised.value)
    assert server.chat_requests == 0  # refused before any model call


async def test_the_named_mapping_scores_the_chains_output(server: LocalOpenAIServer) -> None:
    to_sample = SampleMapping.for_rows().as_runnable()
    chain = rag_chain() | to_sample | Faithfulness(llm=judge(server))
    result = chain.invoke("Where is the Eiffel Tower?")
    assert result.score == pytest.approx(1.0, abs=0.01)
    assert list(result.details.models) == ["judge"]
    again = await chain.ainvoke("Where is the Eiffel Tower?")
    assert again.score == pytest.approx(result.score, abs=0.01)
