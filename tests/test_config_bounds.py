"""Every duration and count of a models file is bounded; a file nested thousands deep is a
config error (exit 2 from the CLI), not a RecursionError."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_cli import SAMPLES, cli, write_jsonl

from langchain_answer_metrics.config import ConfigError, load_config

PROVIDER = """providers:
  local:
    base_url: http://127.0.0.1:9/v1
chat_models:
  list:
    - id: judge-a
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "models.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "extra",
    [
        "retry: {initial_interval: .inf, max_interval: .inf}\n",
        "retry: {max_interval: 2d}\n",
        "retry: {max_interval: 86400}\n",
        "retry: {jitter: .nan}\n",
        "retry: {max_attempts: 1000000}\n",
        "retry: {multiplier: 1e9}\n",
    ],
)
def test_unbounded_retry_settings_are_refused(tmp_path: Path, extra: str) -> None:
    with pytest.raises(ConfigError, match="retry"):
        load_config(write(tmp_path, PROVIDER + extra), env={})


def test_an_infinite_timeout_or_rate_is_refused(tmp_path: Path) -> None:
    text = PROVIDER.replace(
        "base_url: http://127.0.0.1:9/v1", "base_url: http://127.0.0.1:9/v1\n    timeout: .inf"
    )
    with pytest.raises(ConfigError, match="timeout"):
        load_config(write(tmp_path, text), env={})
    text = PROVIDER.replace(
        "base_url: http://127.0.0.1:9/v1", "base_url: http://127.0.0.1:9/v1\n    rate_limit: .inf"
    )
    with pytest.raises(ConfigError, match="rate_limit"):
        load_config(write(tmp_path, text), env={})


def test_sane_values_still_load(tmp_path: Path) -> None:
    extra = "retry: {initial_interval: 500ms, max_interval: 1m, max_attempts: 6}\n"
    assert load_config(write(tmp_path, PROVIDER + extra), env={}).judges


@pytest.mark.slow  # a very large or deep configuration
def test_a_deeply_nested_file_is_a_config_error(tmp_path: Path) -> None:
    path = write(tmp_path, "a: " + "[" * 3000 + "]" * 3000 + "\n")
    with pytest.raises(ConfigError, match="nested too deeply"):
        load_config(path, env={})

    data = write_jsonl(tmp_path / "qa.jsonl", SAMPLES)
    result = cli("evaluate", data, "--metric", "faithfulness", "--config", path)
    assert result.returncode == 2, result.stderr
    assert "nested too deeply" in result.stderr and "Traceback" not in result.stderr


def test_a_rate_limit_below_the_floor_is_refused(tmp_path: Path) -> None:
    text = PROVIDER.replace(
        "base_url: http://127.0.0.1:9/v1",
        "base_url: http://127.0.0.1:9/v1\n    rate_limit: 0.000001",
    )
    with pytest.raises(ConfigError, match=r"rate_limit: must be at least 0\.01 requests per"):
        load_config(write(tmp_path, text), env={})
    text = text.replace("0.000001", "0.01")
    assert load_config(write(tmp_path, text), env={}).judges


def test_a_key_given_twice_is_refused_naming_the_key_and_both_lines(tmp_path: Path) -> None:
    text = PROVIDER.replace(
        "base_url: http://127.0.0.1:9/v1",
        "base_url: http://127.0.0.1:9/v1\n    timeout: 5\n    timeout: 500",
    )
    with pytest.raises(ConfigError, match=r"duplicate key 'timeout' \(lines 4 and 5\)") as caught:
        load_config(write(tmp_path, text), env={})
    assert "500" not in str(caught.value).replace("lines 4 and 5", "")  # values never quoted
    # A key merged in with << may be overridden: that is not a duplicate.
    merged = "defaults: &d\n  timeout: 5\n" + PROVIDER.replace(
        "base_url: http://127.0.0.1:9/v1",
        "<<: *d\n    base_url: http://127.0.0.1:9/v1\n    timeout: 7",
    )
    with pytest.raises(ConfigError, match="defaults: unknown key"):
        load_config(write(tmp_path, merged), env={})


@pytest.mark.slow  # a very large or deep configuration
def test_a_generated_file_with_10000_models_is_refused_at_once(tmp_path: Path) -> None:
    listing = "".join(f"    - id: judge-{index}\n" for index in range(10_000))
    with pytest.raises(ConfigError, match=r"chat_models\.list: has 10,001 entries; at most 1,000"):
        load_config(write(tmp_path, PROVIDER + listing), env={})


def test_every_judge_has_a_request_deadline_by_default(tmp_path: Path) -> None:
    from langchain_answer_metrics.config import panel_from_base_url

    panel = panel_from_base_url("http://127.0.0.1:9/v1", model="m", embedding_model="e", env={})
    for member in [*panel.judges, *panel.embedders]:
        assert member.timeout == 120.0
        assert member.model.request_timeout == 120.0  # type: ignore[attr-defined]
    panel = panel_from_base_url(
        "http://127.0.0.1:9/v1",
        model="m",
        embedding_model=None,
        env={"ANSWER_METRICS_TIMEOUT": "30s"},
    )
    assert panel.judges[0].timeout == 30.0
    with pytest.raises(ConfigError, match="ANSWER_METRICS_TIMEOUT"):
        panel_from_base_url(
            "http://127.0.0.1:9/v1",
            model="m",
            embedding_model=None,
            env={"ANSWER_METRICS_TIMEOUT": "soon"},
        )
    configured = load_config(write(tmp_path, PROVIDER), env={})
    assert configured.judges[0].timeout == 120.0
