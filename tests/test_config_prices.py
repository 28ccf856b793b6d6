"""Prices in the models file: ``price:`` on a model entry, checked when the file is
loaded, kept on the panel by label, and used by ``--max-cost`` (and the estimate and
spend, which read ``Panel.prices`` the same way)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from support import local_models, write_models_yaml
from test_cli import SAMPLES, clean_env, cli, out_lines, write_jsonl

from langchain_answer_metrics.config import ConfigError, panel_from_mapping
from langchain_answer_metrics.core.prices import Price
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

KEY_ENV = "ANSWER_METRICS_TEST_PRICES_KEY"
ENV = {KEY_ENV: "sk-test-prices"}


def config(chat: dict[str, Any] | None = None, embedding: dict[str, Any] | None = None) -> dict:
    return {
        "providers": {"local": {"base_url": "http://127.0.0.1:9/v1", "api_key_env": KEY_ENV}},
        "chat_models": {
            "list": [
                {"id": "judge-model", "name": "judge-a", **(chat or {})},
                {"id": "gpt-4o-mini"},
            ]
        },
        "embedding_models": {"list": [{"id": "embed-model", **(embedding or {})}]},
    }


def test_prices_are_kept_by_label() -> None:
    panel = panel_from_mapping(
        config(
            {"price": {"input_per_million": 0.5, "output_per_million": 1.5}},
            {"price": {"input_per_million": 0.02}},
        ),
        env=ENV,
    )
    assert panel.prices == {
        "judge-a": Price(input_per_million=0.5, output_per_million=1.5),  # the entry's name
        "embed-model": Price(input_per_million=0.02),  # no name: the id
    }
    assert panel.prices["embed-model"].output_per_million == 0.0
    # An entry without a price is left to the built-in table (gpt-4o-mini) or unpriced.
    assert "gpt-4o-mini" not in panel.prices
    # Prices are not secrets, and not part of the panel's description.
    assert "price" not in panel.model_dump_json()


def test_integers_and_zero_are_prices() -> None:
    panel = panel_from_mapping(
        config({"price": {"input_per_million": 0, "output_per_million": 2}}), env=ENV
    )
    assert panel.prices["judge-a"] == Price(input_per_million=0.0, output_per_million=2.0)


@pytest.mark.parametrize(
    ("chat", "embedding", "path", "message"),
    [
        (
            {"price": {"input_per_million": -1, "output_per_million": 1}},
            None,
            "chat_models.list[0].price.input_per_million",
            "greater than or equal to 0",
        ),
        (
            {"price": {"input_per_million": 1, "output_per_million": math.inf}},
            None,
            "chat_models.list[0].price.output_per_million",
            "",
        ),
        (
            {"price": {"input_per_million": math.nan, "output_per_million": 1}},
            None,
            "chat_models.list[0].price.input_per_million",
            "",
        ),
        (
            {"price": {"input_per_million": 1e6, "output_per_million": 1}},
            None,
            "chat_models.list[0].price.input_per_million",
            "less than or equal to 10000",
        ),
        (
            {"price": {"input_per_million": True, "output_per_million": 1}},
            None,
            "chat_models.list[0].price.input_per_million",
            "USD per million tokens",
        ),
        (
            {"price": {"input_per_million": "cheap", "output_per_million": 1}},
            None,
            "chat_models.list[0].price.input_per_million",
            "number",
        ),
        (
            {"price": {"input_per_million": 1}},
            None,
            "chat_models.list[0].price.output_per_million",
            "required key is missing",
        ),
        (
            {"price": {"input_per_milion": 1, "output_per_million": 1}},
            None,
            "chat_models.list[0].price.input_per_milion",
            "did you mean input_per_million?",
        ),
        ({"price": 0.5}, None, "chat_models.list[0].price", "must be a mapping"),
        (
            None,
            {"price": {"input_per_million": 0.1, "output_per_million": 0.1}},
            "embedding_models.list[0].price",
            "output_per_million: embedding models are billed for input only",
        ),
    ],
)
def test_bad_prices_name_the_field(
    chat: dict[str, Any] | None, embedding: dict[str, Any] | None, path: str, message: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        panel_from_mapping(config(chat, embedding), env=ENV)
    problems = dict(caught.value.problems)
    assert path in problems, problems
    assert message in problems[path]


def test_a_bad_price_is_exit_2_naming_the_field(tmp_path: Path) -> None:
    models = write_models_yaml(
        tmp_path, config(None, {"price": {"input_per_million": 0.1, "output_per_million": 1}})
    )
    data = write_jsonl(tmp_path / "qa.jsonl", SAMPLES)
    result = cli(
        "evaluate",
        data,
        "--metric",
        "factual_correctness",
        "--config",
        models,
        env=clean_env(**ENV),
    )
    assert result.returncode == 2
    assert "embedding_models.list[0].price: output_per_million" in result.stderr
    assert "input only" in result.stderr


def priced_models(server: LocalOpenAIServer, judge: str, price: dict[str, float] | None) -> dict:
    models = local_models(server, KEY_ENV, judges=(judge,))
    if price is not None:
        models["chat_models"]["list"][0]["price"] = price
    return models


def test_max_cost_uses_the_config_price(tmp_path: Path, server: LocalOpenAIServer) -> None:
    data = write_jsonl(tmp_path / "qa.jsonl", SAMPLES)
    base = ["evaluate", data, "--metric", "factual_correctness", "--quiet"]

    # Without a price for my-judge, a budget is refused before any request.
    unpriced = write_models_yaml(tmp_path, priced_models(server, "my-judge", None))
    refused = cli(*base, "--config", unpriced, "--max-cost", "1", env=clean_env(**ENV))
    assert refused.returncode == 2
    assert "none for my-judge" in refused.stderr and server.chat_requests == 0

    # With one in the file, it runs; a large price against a tiny budget stops it early.
    cheap = write_models_yaml(
        tmp_path,
        priced_models(server, "my-judge", {"input_per_million": 0.1, "output_per_million": 0.1}),
    )
    out = tmp_path / "out.jsonl"
    ran = cli(*base, "--config", cheap, "--max-cost", "1", "--out", out, env=clean_env(**ENV))
    assert ran.returncode == 0, ran.stderr
    assert len(out_lines(out)) == len(SAMPLES)

    dear = write_models_yaml(
        tmp_path,
        priced_models(server, "my-judge", {"input_per_million": 5000, "output_per_million": 5000}),
    )
    stopped = cli(*base, "--config", dear, "--max-cost", "0.5", env=clean_env(**ENV))
    assert stopped.returncode == 5, stopped.stderr
    assert "stopped early: budget" in stopped.stderr


def test_a_config_price_overrides_the_built_in_one(
    tmp_path: Path, server: LocalOpenAIServer
) -> None:
    # gpt-4o-mini has a built-in price; a free one in the file wins, so a budget of
    # almost nothing runs every sample.
    models = write_models_yaml(
        tmp_path,
        priced_models(server, "gpt-4o-mini", {"input_per_million": 0, "output_per_million": 0}),
    )
    data = write_jsonl(tmp_path / "qa.jsonl", SAMPLES)
    result = cli(
        "evaluate",
        data,
        "--metric",
        "factual_correctness",
        "--config",
        models,
        "--quiet",
        "--max-cost",
        "0.000001",
        env=clean_env(**ENV),
    )
    assert result.returncode == 0, result.stderr
    assert server.chat_requests > 0
