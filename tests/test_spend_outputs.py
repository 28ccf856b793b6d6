"""Spend in every output (issue 13, part 4): ``EvaluationResults.spend()``, the CLI's
summary line, ``--summary-json``'s ``cost`` and ``spend``, the HTML report's table, the
``--out`` records' ``usage``, and the LangSmith summary evaluator's feedback.

Each checks that the numbers are the sum of the per-sample usage, that replies served
from cache are counted apart (and cost nothing), that costs are None/null without a
price and right with one, and that a decomposition AnswerCorrectness and
FactualCorrectness share is counted once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest
from langchain_core.caches import InMemoryCache
from langchain_openai import OpenAIEmbeddings
from langsmith import evaluate as langsmith_evaluate
from support import local_models, write_models_yaml, year_reply
from test_cli import clean_env, cli, out_lines, write_jsonl
from test_langsmith_evaluators import app, examples, offline_client

from langchain_answer_metrics import (
    AnswerCorrectness,
    FactualCorrectness,
    Faithfulness,
    MetricEvaluator,
    SemanticSimilarity,
)
from langchain_answer_metrics.adapters.langsmith.summary import MetricSummaryEvaluator
from langchain_answer_metrics.cli.output.spend_view import spend_html, spend_json, spend_lines
from langchain_answer_metrics.cli.records import MetricRecord, read_records
from langchain_answer_metrics.core.prices import Price
from langchain_answer_metrics.core.result import TokenUsage
from langchain_answer_metrics.costs import default_token_count
from langchain_answer_metrics.judging.judges import Embedder
from langchain_answer_metrics.run.runner import aevaluate, evaluate
from langchain_answer_metrics.run.spend import Pricing, tally
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer
from langchain_answer_metrics.testing.scripted import ScriptedChatModel, ScriptedEmbeddings

JUDGE_PRICE = Price(input_per_million=0.5, output_per_million=1.5)
EMBED_PRICE = Price(input_per_million=0.02)

SAMPLES = [
    {
        "response": "The Eiffel Tower was built in 1889. It is in Paris.",
        "reference": "The Eiffel Tower was built in 1889 in Paris.",
    },
    {
        "response": "Einstein was born in 1879 in Spain.",
        "reference": "Einstein was born in 1879 in Germany.",
    },
    {
        "response": "Москва — столица России с 1918 года.",
        "reference": "Москва является столицей России.",
    },
]


def scripted_judge() -> ScriptedChatModel:
    return ScriptedChatModel(responder=year_reply, model="judge-a")


def summed(rows: Iterable[Mapping[str, Any]]) -> dict[str, TokenUsage]:
    """Each usage label's total, straight from the outcomes (the expected numbers)."""
    total: dict[str, TokenUsage] = {}
    for outcomes in rows:
        for outcome in outcomes.values():
            for label, usage in (getattr(outcome, "usage", None) or {}).items():
                model = label.rpartition("/")[2]  # AnswerCorrectness: component/model
                total[model] = total[model].add(usage) if model in total else usage
    return total


# --------------------------------------------------------------------------- Python


def test_results_spend_is_the_sum_of_the_usage_and_shares_count_once() -> None:
    judge = scripted_judge()
    metrics = [
        FactualCorrectness(llm=judge),
        AnswerCorrectness(llm=judge, embeddings=ScriptedEmbeddings(model="embed-a")),
    ]
    rows = evaluate(SAMPLES, metrics)
    expected = summed(row.results for row in rows)
    spend = rows.spend()

    judge_spend = spend.models["judge-a"]
    assert judge_spend.requests == expected["judge-a"].requests == len(judge.calls)
    assert judge_spend.input_tokens == expected["judge-a"].input_tokens > 0
    assert judge_spend.output_tokens == expected["judge-a"].output_tokens > 0
    # AnswerCorrectness's decompositions are FactualCorrectness's (the same prompts): the
    # model was asked once, and the spend counts that once.
    assert spend.metrics["factual_correctness"]["judge-a"].requests == len(judge.calls)
    answer = spend.metrics["answer_correctness"]
    assert answer.get("judge-a") is None or answer["judge-a"].requests == 0
    assert spend.total.requests == sum(model.requests for model in spend.models.values())

    # No price for judge-a or embed-a: no cost, and which ones say so.
    assert spend.total.cost is None and spend.models["judge-a"].cost is None
    assert spend.unpriced == ["embed-a", "judge-a"] or spend.unpriced == ["judge-a"]

    priced = rows.spend(prices={"judge-a": JUDGE_PRICE, "embed-a": EMBED_PRICE})
    assert priced.models["judge-a"].cost == pytest.approx(
        JUDGE_PRICE.cost(judge_spend.input_tokens, judge_spend.output_tokens)
    )
    assert priced.total.cost == pytest.approx(
        sum(model.cost or 0.0 for model in priced.models.values())
    )
    assert priced.unpriced == []


def test_the_runs_prices_are_used_and_cache_hits_are_counted_apart(
    llm_cache: InMemoryCache,
) -> None:
    judge = scripted_judge()
    metrics = [Faithfulness(llm=judge)]
    samples = [{**sample, "retrieved_contexts": [sample["reference"]]} for sample in SAMPLES]
    first = evaluate(samples, metrics, prices={"judge-a": JUDGE_PRICE})
    sent = len(judge.calls)
    paid = first.spend()
    assert paid.total.cost == pytest.approx(
        JUDGE_PRICE.cost(paid.total.input_tokens, paid.total.output_tokens)
    )
    assert paid.total.cached == 0 and paid.total.requests == sent

    again = evaluate(samples, metrics, prices={"judge-a": JUDGE_PRICE})
    assert len(judge.calls) == sent  # every reply from the cache
    cached = again.spend()
    assert cached.total.cached == sent
    assert cached.total.requests == cached.total.input_tokens == 0
    assert cached.total.cost == 0.0  # cache hits are free, and priced: not None


# --------------------------------------------------------------------------- the CLI

KEY_ENV = "ANSWER_METRICS_TEST_SPEND_KEY"
ENV = {KEY_ENV: "sk-test-spend"}
CLI_SAMPLES = [
    {
        "id": f"s{i}",
        "question": "?",
        "answer": sample["response"],
        "ground_truth": sample["reference"],
    }
    for i, sample in enumerate(SAMPLES)
]


def records_of(out: Path) -> list[Mapping[str, MetricRecord]]:
    records, unreadable = read_records(out)
    assert unreadable == 0
    return [record.metrics for record in records.values()]


@pytest.mark.parametrize("priced", [True, False])
def test_cli_summary_json_report_and_terminal(
    tmp_path: Path, server: LocalOpenAIServer, priced: bool
) -> None:
    config = local_models(server, KEY_ENV)
    if priced:
        config["chat_models"]["list"][0]["price"] = JUDGE_PRICE.model_dump()
        config["embedding_models"]["list"][0]["price"] = {"input_per_million": 0.02}
    models = write_models_yaml(tmp_path, config)
    data = write_jsonl(tmp_path / "qa.jsonl", CLI_SAMPLES)
    out, summary_path, report = (
        tmp_path / "out.jsonl",
        tmp_path / "summary.json",
        tmp_path / "report.html",
    )
    result = cli(
        "evaluate",
        data,
        "--metric",
        "factual_correctness,answer_correctness",
        "--config",
        models,
        "--out",
        out,
        "--summary-json",
        summary_path,
        "--report",
        report,
        env=clean_env(**ENV),  # not --quiet: it leaves the spend block out (issue 30)
    )
    assert result.returncode == 0, result.stderr

    # --out keeps each score's usage; the spend is their sum, and what the server saw.
    records = records_of(out)
    expected = summed(records)
    summary = json.loads(summary_path.read_text("utf-8"))
    spend = summary["spend"]
    judge = spend["models"]["judge-a"]
    assert judge["requests"] == expected["judge-a"].requests == server.chat_requests
    assert judge["input_tokens"] == expected["judge-a"].input_tokens > 0
    assert judge["output_tokens"] == expected["judge-a"].output_tokens > 0
    assert spend["metrics"]["factual_correctness"]["judge-a"]["requests"] == server.chat_requests
    assert spend["metrics"]["answer_correctness"]["total"]["requests"] == (
        expected["embed-a"].requests if "embed-a" in expected else 0
    )  # its decompositions were factual_correctness's: counted there, once
    assert spend["total"]["cached"] == 0
    if priced:
        cost = JUDGE_PRICE.cost(judge["input_tokens"], judge["output_tokens"]) + (
            EMBED_PRICE.cost(spend["models"]["embed-a"]["input_tokens"])
            if "embed-a" in spend["models"]
            else 0.0
        )
        assert summary["cost"] == pytest.approx(cost) and summary["cost"] > 0
        assert spend["total"]["cost"] == pytest.approx(cost) and spend["unpriced"] == []
    else:
        assert summary["cost"] is None and judge["cost"] is None
        assert "judge-a" in spend["unpriced"]

    # The terminal: one line for the run, then per model and per metric (on stderr, so
    # the table on stdout stays that of the saved records).
    line = next(li for li in result.stderr.splitlines() if li.startswith("spend (this run):"))
    assert f"{spend['total']['requests']} requests" in line
    assert ("$" in line) is priced and ("no price for" in line) is not priced
    assert re.search(r"^  judge-a: \d+ requests", result.stderr, re.M)
    assert re.search(r"^  factual_correctness: \d+ requests", result.stderr, re.M)

    # The report: a spend table with a row per model, per metric and model, and a total.
    html = report.read_text("utf-8")
    assert '<h2 id="spend">Spend</h2>' in html
    table = html[html.index('<table class="spend">') :]
    table = table[: table.index("</table>")]
    assert '<tr class="spend-model"><td>judge-a</td>' in table
    assert f'<td class="num">{judge["requests"]:,}</td>' in table
    assert "factual_correctness · judge-a" in table and "spend-total" in table
    assert ("no price" in table) is not priced

    # A rerun resumes everything: it spent nothing, at no cost (priced) or unknown.
    again = cli(
        "evaluate",
        data,
        "--metric",
        "factual_correctness,answer_correctness",
        "--config",
        models,
        "--out",
        out,
        "--summary-json",
        summary_path,
        "--quiet",
        env=clean_env(**ENV),
    )
    assert again.returncode == 0, again.stderr
    rerun = json.loads(summary_path.read_text("utf-8"))
    assert rerun["spend"]["total"]["requests"] == 0
    assert rerun["cost"] == 0.0


def test_records_without_usage_still_load(tmp_path: Path) -> None:
    line = {
        "schema_version": 2,
        "id": "q1",
        "metrics": {"faithfulness": {"kind": "faithfulness", "score": 1.0, "band": "excellent"}},
    }
    out = write_jsonl(tmp_path / "old.jsonl", [line])
    records, unreadable = read_records(out)
    assert unreadable == 0 and records["q1"].metrics["faithfulness"].usage == {}
    assert tally([records["q1"].metrics], Pricing()).total.requests == 0
    assert out_lines(out) == [line]


def test_the_views_show_cache_hits_apart_and_no_price() -> None:
    rows = [
        {
            "faithfulness": MetricRecord(
                usage={
                    "judge-a": TokenUsage(
                        requests=2, input_tokens=1200, output_tokens=300, cached=1
                    )
                }
            ),
            "answer_correctness": MetricRecord(
                usage={
                    "factual_correctness/judge-a": TokenUsage(requests=1, input_tokens=100),
                    "semantic_similarity/local": TokenUsage(requests=1, input_tokens=50),
                }
            ),
        }
    ]
    spend = tally(
        rows, Pricing({"judge-a": "judge-a", "local": "local"}, prices={"judge-a": JUDGE_PRICE})
    )
    assert spend.models["judge-a"].requests == 3 and spend.models["judge-a"].cached == 1
    assert spend.unpriced == ["local"] and spend.total.cost is None
    lines = spend_lines(spend)
    assert lines[0] == (
        "spend: 4 requests, 1,350 input + 300 output tokens, 1 cached (free), no price for local"
    )
    assert lines[1].startswith(
        "  judge-a: 3 requests, 1,300 input + 300 output tokens, 1 cached (free), $0."
    )
    dumped = spend_json(spend)
    assert dumped["metrics"]["answer_correctness"]["total"]["cost"] is None
    assert dumped["metrics"]["faithfulness"]["total"]["cost"] == pytest.approx(
        JUDGE_PRICE.cost(1200, 300)
    )
    html = spend_html(spend, ["faithfulness", "answer_correctness"])
    assert '<th class="num">cached (free)</th>' in html
    assert html.index("faithfulness · judge-a") < html.index("answer_correctness · judge-a")
    assert "no price for local" in html


# --------------------------------------------------------------------------- LangSmith


@pytest.mark.usefixtures("network_attempts")
@pytest.mark.parametrize("priced", [True, False])
def test_the_langsmith_summary_carries_the_spend(priced: bool) -> None:
    judge = scripted_judge()
    evaluator = MetricEvaluator(FactualCorrectness(llm=judge))
    summary = MetricSummaryEvaluator(evaluator, prices={"judge-a": JUDGE_PRICE} if priced else None)
    results = langsmith_evaluate(
        app,
        data=examples(),
        evaluators=[evaluator],
        summary_evaluators=[summary],
        client=offline_client(),
        upload_results=False,
    )
    rows = list(results)
    by_key = {result.key: result for result in results._summary_results["results"]}
    usage = [row["evaluation_results"]["results"][0].extra or {} for row in rows]
    assert len(usage) == 3
    # The summary asked nothing more: its spend is the rows' requests.
    tokens = by_key["factual_correctness_tokens"]
    spent = tokens.metadata or {}
    assert spent["total"]["requests"] == len(judge.calls) > 0
    assert tokens.score == spent["total"]["input_tokens"] + spent["total"]["output_tokens"]
    assert tokens.comment is not None and tokens.comment.startswith("factual_correctness spend:")
    if priced:
        cost = by_key["factual_correctness_cost"].score
        assert cost == pytest.approx(
            JUDGE_PRICE.cost(spent["total"]["input_tokens"], spent["total"]["output_tokens"])
        )
    else:
        assert "factual_correctness_cost" not in by_key
        assert "no price for judge-a" in (tokens.comment or "")


# ------------------------------------------------- embedding requests shared in a run


def embedding_samples(count: int) -> list[dict[str, str]]:
    # References repeat, so some texts are asked for by several samples.
    return [
        {"response": f"Answer number {i}.", "reference": f"Reference {i % 7}."}
        for i in range(count)
    ]


def embedding_requests(outcomes: Iterable[Any], label: str) -> int:
    return sum(outcome.usage[label].requests for outcome in outcomes)


def test_shared_embedding_requests_add_up_over_a_runs_samples() -> None:
    model = ScriptedEmbeddings(model="embed-a")
    embeddings = Embedder(model=model, batch_size=16)
    metrics = [
        SemanticSimilarity(embeddings=embeddings),
        AnswerCorrectness(llm=scripted_judge(), embeddings=embeddings),
    ]
    rows = evaluate(embedding_samples(100), metrics, max_concurrency=4)
    spend = rows.spend()
    assert len(model.requests) > 1  # shared batches of 16 texts
    assert spend.models["embed-a"].requests == len(model.requests)
    assert spend.models["embed-a"].input_tokens == sum(
        default_token_count(text) for request in model.requests for text in request
    )


def test_shared_embedding_requests_add_up_through_abatch() -> None:
    model = ScriptedEmbeddings(model="embed-a")
    metric = SemanticSimilarity(embeddings=Embedder(model=model, batch_size=16))
    results = metric.batch(embedding_samples(60))
    assert len(model.requests) > 1
    assert embedding_requests(results, "embed-a") == len(model.requests)


async def test_shared_embedding_requests_add_up_over_http(server: LocalOpenAIServer) -> None:
    embeddings = OpenAIEmbeddings(
        model="embed-a",
        base_url=server.base_url,
        api_key="sk-test-embed",  # type: ignore[arg-type]
        check_embedding_ctx_length=False,
        max_retries=0,
    )
    metric = SemanticSimilarity(embeddings=Embedder(model=embeddings, batch_size=8))
    rows = await aevaluate(embedding_samples(40), [metric], max_concurrency=3)
    outcomes = [row.results["semantic_similarity"] for row in rows]
    assert server.embedding_requests > 1
    assert embedding_requests(outcomes, "embed-a") == server.embedding_requests


def test_a_run_that_spent_nothing_costs_nothing() -> None:
    spend = tally([{"faithfulness": None}], Pricing())
    assert spend.total.cost == 0.0 and spend.unpriced == []
    assert "no price" not in spend.describe()
