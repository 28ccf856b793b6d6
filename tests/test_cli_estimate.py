"""``answer-metrics evaluate DATA --estimate [--json PATH]``, run as a subprocess against
the local server: it sends no request, prints requests, tokens and cost per model label
and a total, writes ``CostEstimate.as_dict()``, uses the run's metrics, models and
prices, and leaves out the rows already scored in ``--out``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support import local_models, write_models_yaml
from test_cli import SAMPLES, clean_env, cli, error_line, out_lines, write_jsonl

from langchain_answer_metrics import AnswerCorrectness, FactualCorrectness, Faithfulness
from langchain_answer_metrics.config import load_config
from langchain_answer_metrics.costs import estimate
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

KEY_ENV = "ANSWER_METRICS_TEST_CLI_ESTIMATE_KEY"
ENV = {KEY_ENV: "sk-test-cli-estimate"}
METRICS = ["--metric", "factual_correctness,faithfulness,answer_correctness"]
KEYS = {
    "requests",
    "cached",
    "prompt_tokens",
    "cached_input_tokens",
    "completion_tokens_low",
    "completion_tokens_high",
    "cost_low",
    "cost_high",
}


def models_yaml(tmp_path: Path, server: LocalOpenAIServer, *, priced: bool) -> Path:
    config = local_models(server, KEY_ENV)
    if priced:
        config["chat_models"]["list"][0]["price"] = {
            "input_per_million": 0.5,
            "output_per_million": 1.5,
        }
        config["embedding_models"]["list"][0]["price"] = {"input_per_million": 0.02}
    return write_models_yaml(tmp_path, config)


def nothing_sent(server: LocalOpenAIServer) -> bool:
    return server.requests == [] and server.chat_requests == server.embedding_requests == 0


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "qa.jsonl", SAMPLES)


def test_estimate_sends_nothing_and_prints_per_model(
    data: Path, tmp_path: Path, server: LocalOpenAIServer
) -> None:
    models = models_yaml(tmp_path, server, priced=False)
    result = cli("evaluate", data, *METRICS, "--config", models, "--estimate", env=clean_env(**ENV))
    assert result.returncode == 0, result.stderr
    assert nothing_sent(server)
    lines = result.stdout.splitlines()
    assert lines[0] == "estimate for 4 samples (no request sent):"
    header = lines[1].split()
    assert header[:3] == ["model", "requests", "cached"]
    rows = {line.split()[0]: line for line in lines[3:] if line and line[0] != "-"}
    assert {"judge-a", "embed-a", "total"} <= set(rows)
    assert rows["judge-a"].endswith("no price") and rows["total"].endswith("no price")
    assert "no price for judge-a, embed-a" in result.stdout


def test_estimate_json_matches_the_python_estimate_and_the_run(
    data: Path, tmp_path: Path, server: LocalOpenAIServer
) -> None:
    models = models_yaml(tmp_path, server, priced=True)
    path = tmp_path / "estimate.json"
    result = cli(
        "evaluate",
        data,
        *METRICS,
        "--config",
        models,
        "--estimate",
        "--json",
        path,
        env=clean_env(**ENV),
    )
    assert result.returncode == 0, result.stderr
    assert nothing_sent(server)
    written = json.loads(path.read_text("utf-8"))
    assert set(written) == {"judge-a", "embed-a", "total"}
    for label in written:
        assert set(written[label]) == KEYS
    judge = written["judge-a"]
    assert (
        judge["requests"] > 0 and judge["completion_tokens_low"] <= judge["completion_tokens_high"]
    )
    # The config's prices: 0.5 in, 1.5 out (judge), 0.02 in (embedder).
    assert judge["cost_low"] == pytest.approx(
        (judge["prompt_tokens"] * 0.5 + judge["completion_tokens_low"] * 1.5) / 1e6
    )
    assert written["embed-a"]["cost_high"] == pytest.approx(
        written["embed-a"]["prompt_tokens"] * 0.02 / 1e6
    )
    assert written["total"]["cost_high"] == pytest.approx(
        judge["cost_high"] + written["embed-a"]["cost_high"]
    )
    assert "$" in result.stdout.splitlines()[-1] or "$" in result.stdout

    # The same metrics, models and prices in Python give the same estimate.
    panel = load_config(models, env=ENV)
    metrics = [
        FactualCorrectness(llm=panel.judges),
        Faithfulness(llm=panel.judges),
        AnswerCorrectness(llm=panel.judges, embeddings=panel.embedders),
    ]
    samples = [
        {
            "user_input": s["question"],
            "response": s["answer"],
            "reference": s["ground_truth"],
            "retrieved_contexts": s["contexts"],
        }
        for s in SAMPLES
    ]
    assert estimate(samples, metrics, prices=panel.prices).as_dict() == written

    # And the run sends what was estimated.
    ran = cli("evaluate", data, *METRICS, "--config", models, "--quiet", env=clean_env(**ENV))
    assert ran.returncode == 0, ran.stderr
    assert server.chat_requests == judge["requests"]
    assert server.embedding_requests == written["embed-a"]["requests"]


def test_without_a_price_the_costs_are_null(
    data: Path, tmp_path: Path, server: LocalOpenAIServer
) -> None:
    path = tmp_path / "estimate.json"
    result = cli(
        "evaluate",
        data,
        "--metric",
        "faithfulness",
        "--base-url",
        server.base_url,
        "--model",
        "my-local-judge",
        "--estimate",
        "--json",
        path,
    )
    assert result.returncode == 0, result.stderr
    assert nothing_sent(server)
    written = json.loads(path.read_text("utf-8"))
    assert written["my-local-judge"]["cost_low"] is None
    assert written["my-local-judge"]["cost_high"] is None
    assert written["total"]["cost_low"] is None and written["total"]["cost_high"] is None
    assert written["total"]["requests"] == written["my-local-judge"]["requests"] > 0


def test_rows_already_in_out_are_not_estimated(tmp_path: Path, server: LocalOpenAIServer) -> None:
    models = models_yaml(tmp_path, server, priced=True)
    out = tmp_path / "out.jsonl"
    first = write_jsonl(tmp_path / "first.jsonl", SAMPLES[:2])
    ran = cli(
        "evaluate",
        first,
        "--metric",
        "faithfulness",
        "--config",
        models,
        "--out",
        out,
        "--quiet",
        env=clean_env(**ENV),
    )
    assert ran.returncode == 0, ran.stderr
    assert len(out_lines(out)) == 2
    server.reset()

    every = write_jsonl(tmp_path / "every.jsonl", SAMPLES)
    path = tmp_path / "estimate.json"
    resumed = cli(
        "evaluate",
        every,
        "--metric",
        "faithfulness",
        "--config",
        models,
        "--out",
        out,
        "--estimate",
        "--json",
        path,
        env=clean_env(**ENV),
    )
    assert resumed.returncode == 0, resumed.stderr
    assert nothing_sent(server)
    assert "estimate for 2 samples" in resumed.stdout
    assert len(out_lines(out)) == 2  # nothing written to --out
    estimated: dict[str, Any] = json.loads(path.read_text("utf-8"))

    # The rest of the run sends exactly what was estimated for the two rows left.
    rest = cli(
        "evaluate",
        every,
        "--metric",
        "faithfulness",
        "--config",
        models,
        "--out",
        out,
        "--quiet",
        env=clean_env(**ENV),
    )
    assert rest.returncode == 0, rest.stderr
    assert server.chat_requests == estimated["judge-a"]["requests"] > 0

    # Everything scored: nothing left to estimate.
    done = cli(
        "evaluate",
        every,
        "--metric",
        "faithfulness",
        "--config",
        models,
        "--out",
        out,
        "--estimate",
        "--json",
        path,
        env=clean_env(**ENV),
    )
    assert done.returncode == 0, done.stderr
    assert "estimate for 0 samples" in done.stdout
    assert json.loads(path.read_text("utf-8"))["total"]["requests"] == 0


def test_json_needs_estimate(data: Path, tmp_path: Path) -> None:
    result = cli("evaluate", data, "--metric", "faithfulness", "--json", tmp_path / "e.json")
    assert result.returncode == 2
    assert "--json PATH goes with --estimate" in error_line(result)
    # calibrate has no --estimate (it scores labelled rows to compare them).
    calibrate = cli("calibrate", data, "--estimate")
    assert calibrate.returncode == 2 and "unrecognized arguments: --estimate" in calibrate.stderr


def test_json_into_a_missing_folder_is_a_usage_error(
    data: Path, tmp_path: Path, server: LocalOpenAIServer
) -> None:
    result = cli(
        "evaluate",
        data,
        "--metric",
        "faithfulness",
        "--base-url",
        server.base_url,
        "--model",
        "judge-a",
        "--estimate",
        "--json",
        tmp_path / "missing" / "e.json",
    )
    assert result.returncode == 2
    assert "does not exist" in result.stderr and nothing_sent(server)
