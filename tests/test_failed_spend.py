"""What a judge spent before it failed is counted: in the result's usage when it is left
out of the score, in the MetricError when every judge failed, and so in the run's spend
and its budget. A re-ask loop that ends in an error was paid for, request by request.
"""

from __future__ import annotations

from typing import Any

from conftest import fact_judge
from support import fact_responder

from langchain_answer_metrics import Faithfulness
from langchain_answer_metrics.core.prices import Price
from langchain_answer_metrics.run.runner import evaluate
from langchain_answer_metrics.testing.scripted import ScriptedChatModel

SAMPLE = {
    "response": "Paris is in France. It has a tower.",
    "retrieved_contexts": ["Paris is the capital of France."],
}
PRICES = {
    "judge-a": Price(input_per_million=1000.0, output_per_million=1000.0),
    "judge-b": Price(input_per_million=1000.0, output_per_million=1000.0),
}


def verifies_badly(model: str = "judge-b") -> ScriptedChatModel:
    """Decomposes well, then answers every verification with malformed JSON."""
    good = fact_responder()

    def reply(schema: str, messages: list[Any]) -> Any:
        return "{not json" if schema == "ClaimVerdicts" else good(schema, messages)

    return ScriptedChatModel(responder=reply, model=model)


def test_a_judge_left_out_still_counts_what_it_spent() -> None:
    good, bad = fact_judge("judge-a"), verifies_badly()
    result = Faithfulness(llm=[good, bad]).invoke(SAMPLE)
    assert [failure.model for failure in result.excluded] == ["judge-b"]
    failure = result.excluded[0]
    # One decomposition, then the verification and each of its re-asks.
    assert failure.usage is not None and failure.usage.requests == len(bad.calls) > 2
    assert result.usage["judge-b"].requests == len(bad.calls)
    assert result.usage["judge-b"].input_tokens > 0
    assert result.usage["judge-a"].requests == len(good.calls)


def test_a_metric_error_carries_what_the_judges_spent() -> None:
    bad = verifies_badly("judge-a")
    rows = evaluate([SAMPLE, SAMPLE | {"response": "Rome is in Italy."}], [Faithfulness(llm=bad)])
    errors = [row.results["faithfulness"] for row in rows]
    assert all(error.error_type == "AllModelsFailedError" for error in errors)
    assert sum(error.usage["judge-a"].requests for error in errors) == len(bad.calls)
    spend = rows.spend(prices=PRICES)
    assert spend.total.requests == len(bad.calls)
    assert spend.total.cost is not None and spend.total.cost > 0


def test_the_budget_counts_failed_samples() -> None:
    def run(budget: float | None) -> tuple[Any, ScriptedChatModel]:
        bad = verifies_badly("judge-a")
        samples = [SAMPLE | {"response": f"Fact {i} holds. Claim {i} too."} for i in range(20)]
        # No judge exclusion (max_consecutive_failures=None): the judge fails every sample,
        # and the budget must stop the run on what those failures spent.
        rows = evaluate(
            samples,
            [Faithfulness(llm=bad)],
            prices=PRICES,
            budget=budget,
            max_consecutive_failures=None,
        )
        return rows, bad

    full, _ = run(None)
    total = full.spend(prices=PRICES).total.cost
    assert total is not None and total > 0
    rows, _ = run(total / 2)
    spent = rows.spend(prices=PRICES).total.cost
    assert spent is not None and spent <= total / 2
    assert rows.stopped is not None and rows.stopped.reason == "budget"
