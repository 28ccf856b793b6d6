"""The summary evaluators' results read offline through a public name (LangSmith keeps an
offline experiment's summary feedback only in a private attribute)."""

from __future__ import annotations

import uuid
import warnings

import pytest
from langchain_openai import ChatOpenAI
from langsmith import Client
from langsmith.evaluation import evaluate
from langsmith.schemas import Example

from langchain_answer_metrics import Faithfulness, evaluators
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

ROWS = [
    ("Where is the tower?", "It is in Paris.", ["The tower stands in Paris."]),
    ("Where is the tower?", "It is in Rome.", ["The tower stands in Paris."]),
]


def offline_client() -> Client:
    return Client(
        api_key="offline",
        api_url="http://127.0.0.1:9",
        auto_batch_tracing=False,
        tracing_sampling_rate=0.0,
    )


@pytest.mark.usefixtures("langsmith_offline")
def test_the_summaries_are_read_offline_through_a_public_name(
    server: LocalOpenAIServer,
) -> None:
    judge = ChatOpenAI(
        base_url=server.base_url, api_key="sk-test", model="judge", use_responses_api=False
    )
    evs = evaluators([Faithfulness(llm=judge, threshold=0.5)])
    assert evs.summaries() == {}  # before any experiment
    data = [
        Example(
            id=uuid.uuid4(),
            inputs={"question": question},
            outputs={"answer": answer, "contexts": contexts},
        )
        for question, answer, contexts in ROWS
    ]

    with warnings.catch_warnings():
        # LangSmith's own note on upload_results=False (a beta parameter).
        warnings.simplefilter("ignore")
        results = evaluate(
            lambda inputs: {"answer": "It is in Paris.", "contexts": ROWS[0][2]},
            data=data,
            evaluators=evs,
            summary_evaluators=evs.summary_evaluators,
            client=offline_client(),
            upload_results=False,
        )
        rows = list(results)
    assert len(rows) == 2
    summary = evs.summaries()["faithfulness"]
    assert summary.scored == 2 and summary.mean == pytest.approx(1.0, abs=0.01)
    assert summary.pass_rate == pytest.approx(1.0)
    # The same numbers as the summary feedback LangSmith keeps (privately) for the run.
    kept = {r.key: r.score for r in results._summary_results["results"]}
    assert kept["faithfulness_mean"] == pytest.approx(summary.mean)
