"""The metrics inside LangSmith's pytest plugin: tests marked ``@pytest.mark.langsmith``.

``LANGSMITH_TEST_TRACKING=false`` turns the plugin's logging into no-ops, so these run
offline; a guard fails any connection that is not loopback.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from langsmith import testing as t
from support import year_judge

from langchain_answer_metrics import AspectCritic, Faithfulness
from langchain_answer_metrics.adapters.langsmith.evaluators import async_function_evaluator

pytestmark = pytest.mark.usefixtures("langsmith_offline")  # see conftest.py


@pytest.fixture
def test_item(request: pytest.FixtureRequest) -> pytest.Item:
    # A langsmith-marked test must not take `request` itself: the plugin's wrapper keeps it.
    assert isinstance(request.node, pytest.Item)
    return request.node


def rag_app(question: str) -> dict[str, Any]:
    return {
        "answer": "The Eiffel Tower was built in 1889.",
        "contexts": ["The Eiffel Tower was built in 1889. It stands in Paris."],
    }


def _wrapped_by_the_plugin(item: pytest.Item) -> bool:
    """Whether the test function runs inside langsmith's test wrapper.

    The plugin swaps ``item.obj`` for that wrapper (pytest-asyncio may wrap it again):
    look for a function defined in langsmith along the ``__wrapped__`` chain.
    """
    function = getattr(item, "obj", None)
    while function is not None:
        code = getattr(function, "__code__", None)
        if code is not None and f"langsmith{os.sep}testing" in code.co_filename:
            return True
        function = getattr(function, "__wrapped__", None)
    return False


@pytest.mark.langsmith
def test_answer_is_grounded(test_item: pytest.Item) -> None:
    assert _wrapped_by_the_plugin(test_item)
    question = "When was the Eiffel Tower built?"
    outputs = rag_app(question)
    t.log_inputs({"question": question})
    t.log_outputs(outputs)

    result = Faithfulness(llm=year_judge(), threshold=0.9).invoke(
        {
            "user_input": question,
            "response": outputs["answer"],
            "retrieved_contexts": outputs["contexts"],
        }
    )
    t.log_feedback(key=result.key, score=result.score, comment=result.reason)
    assert result.passed, result.reason


@pytest.mark.langsmith
async def test_answer_gives_a_date_async(test_item: pytest.Item) -> None:
    assert _wrapped_by_the_plugin(test_item)
    has_date = async_function_evaluator(
        AspectCritic(llm=year_judge(), name="has_date", criterion="The answer gives a year.")
    )
    feedback = await has_date(
        inputs={"question": "When?"}, outputs=rag_app("When?"), reference_outputs={}
    )
    t.log_feedback(key=feedback["key"], score=feedback["score"], comment=feedback["comment"])
    assert feedback == {
        "key": "has_date",
        "score": 1.0,
        "comment": "PASS: year check",
        "metadata": feedback["metadata"],
    }
    assert feedback["metadata"]["details"]["models"]["judge-a"]["votes"] == ["PASS"]


@pytest.mark.langsmith
def test_function_evaluator_with_a_failing_row(test_item: pytest.Item) -> None:
    assert _wrapped_by_the_plugin(test_item)
    grounded = Faithfulness(llm=year_judge()).as_function_evaluator()
    feedback = grounded(inputs={"question": "When?"}, outputs={"answer": "In 1889."})
    t.log_feedback(key=feedback["key"], score=feedback["score"], comment=feedback["comment"])
    # No contexts: the metric cannot score, and says so instead of raising.
    assert feedback["key"] == "faithfulness" and feedback["score"] is None
    assert "retrieved_contexts" in feedback["comment"]
