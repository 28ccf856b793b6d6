"""A run's limits: ``budget=`` (USD) and ``max_requests=`` in Python, ``--max-cost`` and
``--max-requests`` on the command line.

What is checked: a run stops starting samples before the next one would take it past a
limit, so it ends under the limit by at most about one sample; the samples left are
reported as not run (never checkpointed, scored by a rerun); a budget without a price
for every model is refused before any request. Spend is measured from what the models
report (the local server's usage through ChatOpenAI, the scripted model's counts).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from conftest import fact_judge
from langchain_openai import ChatOpenAI
from support import GPT_4O_MINI, priced_models_yaml
from test_cli import clean_env, cli, out_lines, write_jsonl

from langchain_answer_metrics import FactualCorrectness, Faithfulness
from langchain_answer_metrics.core.prices import Price
from langchain_answer_metrics.run.runner import aevaluate, evaluate, stream_evaluate
from langchain_answer_metrics.run.spend import Pricing, tally
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer
from langchain_answer_metrics.testing.scripted import prompt_section

PRICES = {"judge-a": Price(input_per_million=1000.0, output_per_million=2000.0)}


def sample(index: int) -> dict[str, Any]:
    # Lengths vary, so samples cost different amounts.
    extra = " It was a notable day." * (index % 4)
    return {
        "user_input": f"What happened in year {1800 + index}?",
        "response": f"Event {index} happened in {1800 + index}. It was in city {index}.{extra}",
        "reference": f"Event {index} took place in {1800 + index}.",
        "retrieved_contexts": [f"Event {index} is recorded in {1800 + index}."],
    }


SAMPLES = [sample(index) for index in range(30)]


def per_sample_costs(metrics: list[Any], prices: dict[str, Price]) -> list[float]:
    rows = evaluate(SAMPLES, metrics, prices=prices)
    pricing = Pricing.of(metrics, prices=prices)
    return [tally([row.results], pricing).total.cost or 0.0 for row in rows]


def spent(rows: Any, metrics: list[Any], prices: dict[str, Price]) -> float:
    pricing = Pricing.of(metrics, prices=prices)
    cost = tally((row.results for row in rows if not row.not_run), pricing).total.cost
    assert cost is not None
    return cost


@pytest.mark.parametrize("share", [0.1, 0.5, 0.9])
def test_a_budget_stops_within_one_sample_of_the_limit(share: float) -> None:
    def metrics() -> list[Any]:
        judge = fact_judge()
        return [FactualCorrectness(llm=judge), Faithfulness(llm=judge)]

    costs = per_sample_costs(metrics(), PRICES)
    budget = sum(costs) * share
    limited = metrics()
    rows = evaluate(SAMPLES, limited, prices=PRICES, budget=budget, max_concurrency=4)

    total = spent(rows, limited, PRICES)
    assert total <= budget
    assert total > budget - max(costs)  # it stopped within one sample's cost
    ran = [row for row in rows if not row.not_run]
    assert 0 < len(ran) < len(SAMPLES)
    # The samples not run are the last ones, each with a NotRun outcome per metric.
    assert [row.index for row in rows] == list(range(len(SAMPLES)))
    assert all(not row.not_run for row in rows[: len(ran)])
    assert all(row.not_run and not row.errors for row in rows[len(ran) :])
    outcome = rows[-1].results["faithfulness"]
    assert outcome.error_type == "NotRun" and outcome.stop_reason == "budget"
    assert rows.stopped is not None and rows.stopped.reason == "budget"
    assert rows.stopped.not_run == len(SAMPLES) - len(ran)
    assert f"${budget:.4f}" in rows.stopped.message


def test_max_requests_stops_within_one_sample_of_the_cap() -> None:
    judge = fact_judge()
    metrics = [FactualCorrectness(llm=judge), Faithfulness(llm=judge)]
    rows = evaluate(SAMPLES, metrics, max_requests=37, max_concurrency=4)

    sent = len(judge.calls)
    assert sent <= 37
    most = max(
        sum(spent.requests for outcome in row.results.values() for spent in outcome.usage.values())
        for row in rows
        if not row.not_run
    )
    assert sent > 37 - most
    assert rows.stopped is not None and rows.stopped.reason == "max_requests"


def test_without_limits_nothing_is_held_back() -> None:
    judge = fact_judge()
    rows = evaluate(SAMPLES, [Faithfulness(llm=judge)], max_requests=10_000, budget=None)
    assert rows.stopped is None and not any(row.not_run for row in rows)


def test_a_budget_needs_a_price_for_every_model_before_any_request() -> None:
    judge = fact_judge("my-own-model")
    with pytest.raises(ValueError, match="none for my-own-model"):
        evaluate(SAMPLES, [Faithfulness(llm=judge)], budget=1.0)
    assert judge.calls == []


def test_not_run_samples_are_not_checkpointed_and_a_rerun_scores_them(tmp_path: Path) -> None:
    checkpoint = tmp_path / "run.jsonl"
    judge = fact_judge()
    metrics = [Faithfulness(llm=judge)]
    budget = sum(per_sample_costs([Faithfulness(llm=fact_judge())], PRICES)) / 3
    first = evaluate(SAMPLES, metrics, prices=PRICES, budget=budget, checkpoint=checkpoint)
    ran = sum(not row.not_run for row in first)
    assert 0 < ran < len(SAMPLES)
    assert len(checkpoint.read_text("utf-8").splitlines()) == ran

    again = fact_judge()
    second = evaluate(SAMPLES, [Faithfulness(llm=again)], checkpoint=checkpoint)
    assert second.stopped is None and not any(row.not_run for row in second)
    decomposed = {
        prompt_section(messages, "text")
        for schema, messages in again.calls
        if schema == "ClaimList"
    }
    assert decomposed == {SAMPLES[i]["response"] for i in range(ran, len(SAMPLES))}


def test_a_stream_yields_the_samples_not_run() -> None:
    judge = fact_judge()
    rows = list(stream_evaluate(SAMPLES, [Faithfulness(llm=judge)], max_requests=6))
    assert len(rows) == len(SAMPLES)
    assert rows[-1].not_run and not rows[0].not_run


# --------------------------------------------------------------------------- real HTTP


def openai_judge(server: LocalOpenAIServer, model: str = "gpt-4o-mini") -> ChatOpenAI:
    return ChatOpenAI(
        model=model,
        base_url=server.base_url,
        api_key="sk-test-budget",  # type: ignore[arg-type]
        use_responses_api=False,
        max_retries=0,
        timeout=30,
    )


async def test_the_budget_counts_what_the_server_reports(server: LocalOpenAIServer) -> None:
    # Priced at gpt-4o-mini's list price (on localhost no built-in price applies); the
    # server reports usage per reply.
    judge = openai_judge(server)
    metrics = [FactualCorrectness(llm=judge)]
    prices = {"gpt-4o-mini": Price(**GPT_4O_MINI)}
    full = await aevaluate(SAMPLES[:10], metrics, prices=prices)
    pricing = Pricing.of(metrics, prices=prices)
    costs = [tally([row.results], pricing).total.cost or 0.0 for row in full]
    assert all(cost > 0 for cost in costs)
    server.reset()

    budget = sum(costs) / 2
    rows = await aevaluate(SAMPLES[:10], metrics, budget=budget, max_concurrency=3, prices=prices)
    total = spent(rows, metrics, prices)
    assert budget - max(costs) < total <= budget
    ran = [row for row in rows if not row.not_run]
    assert server.chat_requests == sum(
        spent.requests for row in ran for spent in row.results["factual_correctness"].usage.values()
    )


# --------------------------------------------------------------------------- the CLI


def test_cli_max_cost_stops_keeps_and_resumes(tmp_path: Path, server: LocalOpenAIServer) -> None:
    data = write_jsonl(
        tmp_path / "qa.jsonl",
        [
            {
                "id": f"s{i}",
                "question": s["user_input"],
                "answer": s["response"],
                "ground_truth": s["reference"],
            }
            for i, s in enumerate(SAMPLES[:12])
        ],
    )
    out, summary = tmp_path / "out.jsonl", tmp_path / "summary.json"
    base = [
        "evaluate",
        data,
        "--metric",
        "factual_correctness",
        "--config",
        priced_models_yaml(tmp_path, server),  # on localhost: no built-in price
        "--out",
        out,
        "--quiet",
    ]

    # One sample of this data costs about $0.0003 at gpt-4o-mini's list price; the dry
    # run, which admits the first sample, expects at most $0.0006.
    stopped = cli(*base, "--max-cost", "0.001", "--summary-json", summary, env=clean_env())
    assert stopped.returncode == 5, stopped.stderr
    assert "stopped early: budget $0.0010 reached" in stopped.stderr
    kept = out_lines(out)
    report = json.loads(summary.read_text("utf-8"))
    assert 0 < len(kept) < 12
    assert report["not_run"] == 12 - len(kept)
    assert report["stopped"]["reason"] == "budget"
    assert report["stopped"]["not_run"] == report["not_run"]
    assert report["exit_code"] == 5

    resumed = cli(*base, env=clean_env())
    assert resumed.returncode == 0, resumed.stderr
    assert len(out_lines(out)) == 12


def test_cli_max_requests(tmp_path: Path, server: LocalOpenAIServer) -> None:
    data = write_jsonl(
        tmp_path / "qa.jsonl",
        [
            {"id": f"s{i}", "answer": s["response"], "ground_truth": s["reference"]}
            for i, s in enumerate(SAMPLES[:12])
        ],
    )
    result = cli(
        "evaluate",
        data,
        "--metric",
        "factual_correctness",
        "--base-url",
        server.base_url,
        "--model",
        "judge-a",
        "--max-requests",
        "9",
        "--quiet",
    )
    assert result.returncode == 5, result.stderr
    assert "max_requests 9 reached" in result.stderr
    assert server.chat_requests <= 9


def test_cli_max_cost_without_a_price_is_a_usage_error(
    tmp_path: Path, server: LocalOpenAIServer
) -> None:
    data = write_jsonl(tmp_path / "qa.jsonl", [{"answer": "a", "ground_truth": "b"}])
    result = cli(
        "evaluate",
        data,
        "--metric",
        "factual_correctness",
        "--base-url",
        server.base_url,
        "--model",
        "my-local-model",
        "--max-cost",
        "1",
    )
    assert result.returncode == 2
    assert "--max-cost needs a price for every model; none for my-local-model" in result.stderr
    assert server.chat_requests == 0


@pytest.mark.parametrize("value", ["-1", "abc", "inf", "nan"])
def test_cli_refuses_a_bad_max_cost(tmp_path: Path, value: str) -> None:
    data = write_jsonl(tmp_path / "qa.jsonl", [{"answer": "a", "ground_truth": "b"}])
    result = cli("evaluate", data, "--max-cost", value)
    assert result.returncode == 2
    assert "--max-cost" in result.stderr


def test_budget_is_not_nan() -> None:
    with pytest.raises(ValueError, match="budget"):
        evaluate(SAMPLES, [Faithfulness(llm=fact_judge())], budget=math.nan, prices=PRICES)


def test_every_sample_comes_back_run_or_not() -> None:
    # A sample's done callback may run after the runner has taken its row: the limits
    # must still see it finished, or the run ended early, short of rows (seen 1 in 8).
    costs = per_sample_costs([Faithfulness(llm=fact_judge())], PRICES)
    for _ in range(30):
        rows = evaluate(
            SAMPLES, [Faithfulness(llm=fact_judge())], prices=PRICES, budget=sum(costs) / 3
        )
        assert len(rows) == len(SAMPLES)
        assert rows.stopped is not None and rows.stopped.not_run == sum(r.not_run for r in rows)


@pytest.mark.parametrize("limit", [{"budget": 0.0}, {"max_requests": 0}])
def test_a_limit_of_zero_starts_nothing(limit: dict[str, Any]) -> None:
    judge = fact_judge()
    rows = evaluate(SAMPLES[:5], [Faithfulness(llm=judge)], prices=PRICES, **limit)
    assert judge.calls == []
    assert all(row.not_run for row in rows) and len(rows) == 5
    assert rows.stopped is not None and rows.stopped.not_run == 5
