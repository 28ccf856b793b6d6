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
    text = PROVIDER.replace("base_url: http://127.0.0.1:9/v1",
                            "base_url: http://127.0.0.1:9/v1\n    timeout: .inf")
    with pytest.raises(ConfigError, match="timeout"):
        load_config(write(tmp_path, text), env={})
    text = PROVIDER.replace("base_url: http://127.0.0.1:9/v1",
                            "base_url: http://127.0.0.1:9/v1\n    rate_limit: .inf")
    with pytest.raises(ConfigError, match="rate_limit"):
        load_config(write(tmp_path, text), env={})


def test_sane_values_still_load(tmp_path: Path) -> None:
    extra = "retry: {initial_interval: 500ms, max_interval: 1m, max_attempts: 6}\n"
    assert load_config(write(tmp_path, PROVIDER + extra), env={}).judges


def test_a_deeply_nested_file_is_a_config_error(tmp_path: Path) -> None:
    path = write(tmp_path, "a: " + "[" * 3000 + "]" * 3000 + "\n")
    with pytest.raises(ConfigError, match="nested too deeply"):
        load_config(path, env={})

    data = write_jsonl(tmp_path / "qa.jsonl", SAMPLES)
    result = cli("evaluate", data, "--metric", "faithfulness", "--config", path)
    assert result.returncode == 2, result.stderr
    assert "nested too deeply" in result.stderr and "Traceback" not in result.stderr
