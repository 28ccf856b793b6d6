"""Short references ("Paris", "1889"): decomposed and verified with their question.

Through the real HTTP path (ChatOpenAI against the local server's toy judge):

- a perfect answer to a one-word reference keeps its recall (it was 0 when the reference
  was decomposed without its question);
- verification shows the question only where the source answers it (FactualCorrectness's
  reference and response), never where the source is retrieved contexts (Faithfulness);
- a wrong answer to a one-word reference is still contradicted;
- a custom verify template may use ``{question}``.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.prompts import ChatPromptTemplate
from langchain_openai import ChatOpenAI

from langchain_answer_metrics import FactualCorrectness, Faithfulness
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer
from langchain_answer_metrics.testing.prompt_reading import message_text, parse_sections

QUESTION = "What is the capital of France?"


def judge(server: LocalOpenAIServer, model: str = "judge-a") -> ChatOpenAI:
    return ChatOpenAI(
        base_url=server.base_url,
        api_key="sk-test",
        model=model,  # type: ignore[arg-type]
        use_responses_api=False,
        max_retries=0,
    )


def verify_sections(server: LocalOpenAIServer) -> list[dict[str, str]]:
    """The data sections of every verification request the server received."""
    found = []
    for request in server.requests:
        body: dict[str, Any] = request.body or {}
        messages = body.get("messages") or []
        data = message_text(messages[-1]) if messages else ""
        sections = parse_sections(data)
        if "claims" in sections:
            found.append(sections)
    return found


async def test_a_perfect_answer_to_a_one_word_reference_keeps_its_recall(
    server: LocalOpenAIServer,
) -> None:
    metric = FactualCorrectness(llm=judge(server))
    result = await metric.ainvoke(
        {
            "user_input": QUESTION,
            "response": "The capital of France is Paris.",
            "reference": "Paris",
        }
    )
    details = result.details["models"]["judge-a"]
    assert [v.claim for v in details.reference_claims] == ["The capital of France is Paris."]
    assert details.recall == pytest.approx(1.0)
    assert details.precision == pytest.approx(1.0)
    assert result.score == pytest.approx(1.0)
    # Both verifications carried the question; four requests in all.
    sections = verify_sections(server)
    assert len(sections) == 2
    assert all(s.get("question") == QUESTION for s in sections)
    assert server.chat_requests == 4


def test_a_wrong_answer_to_a_one_word_reference_is_contradicted(
    server: LocalOpenAIServer,
) -> None:
    metric = FactualCorrectness(llm=judge(server), mode="precision")
    result = metric.invoke(
        {"user_input": QUESTION, "response": "The capital of France is Lyon.", "reference": "Paris"}
    )
    [verdict] = result.details["models"]["judge-a"].response_claims
    assert verdict.verdict == "contradicted"
    assert result.score == pytest.approx(0.0)


def test_without_a_question_the_verification_shows_none(server: LocalOpenAIServer) -> None:
    FactualCorrectness(llm=judge(server)).invoke(
        {
            "response": "The capital of France is Paris.",
            "reference": "The capital of France is Paris.",
        }
    )
    sections = verify_sections(server)
    assert len(sections) == 2
    assert all("question" not in s for s in sections)


def test_faithfulness_never_shows_the_question_with_the_contexts(
    server: LocalOpenAIServer,
) -> None:
    Faithfulness(llm=judge(server)).invoke(
        {
            "user_input": QUESTION,
            "response": "The capital of France is Paris.",
            "retrieved_contexts": ["Paris is the capital and largest city of France."],
        }
    )
    [sections] = verify_sections(server)
    assert "question" not in sections
    assert sections["source"].startswith("Paris is the capital")


def test_a_custom_verify_template_may_use_the_question(server: LocalOpenAIServer) -> None:
    template = ChatPromptTemplate.from_messages(
        [("system", "Check claims."), ("human", "{question}{source}\n{claims}")]
    )
    metric = FactualCorrectness(llm=judge(server), prompts={"verify_claims": template})
    result = metric.invoke(
        {
            "user_input": QUESTION,
            "response": "The capital of France is Paris.",
            "reference": "Paris",
        }
    )
    assert result.score == pytest.approx(1.0)
    assert all(s.get("question") == QUESTION for s in verify_sections(server))
