"""A key the user configured is redacted whatever its shape: a plain short word
(``swordfishsecret``, as self-hosted servers use), a short one, one with digits.

A server answering 401 quotes the key it was sent; the CLI must not echo it into
``--out``, the report, the summary JSON or stderr, whether the key came from a config
file's ``api_key_env`` or from ``OPENAI_API_KEY`` with ``--base-url``.
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from support import local_models, write_models_yaml
from test_cli import SAMPLES, clean_env, cli, write_jsonl

from langchain_answer_metrics.core.redaction import redact, register_secret
from langchain_answer_metrics.testing.faults import Fault
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

WORD_KEY = "swordfishsecret"  # 15 letters: taken for a placeholder before


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def assert_hidden(key: str, where: str, text: str) -> None:
    assert key not in text, f"the key {key!r} leaked into {where}: {text[:300]!r}"
    assert b64(key) not in text, f"the key's base64 leaked into {where}"


def run_refused(
    tmp_path: Path, server: LocalOpenAIServer, args: list[str], env: dict[str, str]
) -> dict[str, str]:
    """One run against a server that answers 401 quoting the key; what a user can see."""
    server.faults = Fault("500", status=401, echo_key=True)
    data = write_jsonl(tmp_path / "qa.jsonl", SAMPLES[:2])
    out, report, summary = tmp_path / "out.jsonl", tmp_path / "r.html", tmp_path / "s.json"
    result = cli(
        "evaluate",
        data,
        "--metric",
        "faithfulness",
        *args,
        "--out",
        out,
        "--report",
        report,
        "--summary-json",
        summary,
        "--quiet",
        "--allow-errors",
        env=env,
    )
    assert result.returncode == 0, result.stderr
    # The 401 did happen, and its text (the key masked) reached every output.
    assert "Incorrect API key provided: <redacted>" in out.read_text("utf-8")
    return {
        "--out": out.read_text("utf-8"),
        "--report": report.read_text("utf-8"),
        "--summary-json": summary.read_text("utf-8"),
        "stderr": result.stderr,
        "stdout": result.stdout,
    }


@pytest.mark.parametrize("key", [WORD_KEY, "hunter", "Passw0rd", "abc"])
def test_a_key_from_the_environment_is_redacted_whatever_its_shape(
    tmp_path: Path, server: LocalOpenAIServer, key: str
) -> None:
    seen = run_refused(
        tmp_path,
        server,
        ["--base-url", server.base_url, "--model", "judge-a"],
        clean_env(OPENAI_API_KEY=key),
    )
    for where, text in seen.items():
        assert_hidden(key, where, text)


def test_a_key_named_in_a_config_file_is_redacted(
    tmp_path: Path, server: LocalOpenAIServer
) -> None:
    config = write_models_yaml(tmp_path, local_models(server, "SELF_HOSTED_KEY", max_attempts=1))
    seen = run_refused(
        tmp_path, server, ["--config", str(config)], clean_env(SELF_HOSTED_KEY=WORD_KEY)
    )
    for where, text in seen.items():
        assert_hidden(WORD_KEY, where, text)


def test_known_placeholders_stay_words_and_short_keys_stand_alone() -> None:
    register_secret("zq7")
    # A key of three characters is hidden where it stands alone, not inside words.
    assert redact("key zq7, zq7x") == "key <redacted>, zq7x"
    # The keys local servers ask for are not secrets: hiding them garbles messages.
    for placeholder in ("local", "ollama", "EMPTY", "not-needed"):
        register_secret(placeholder)
    assert redact("no price for local; ollama; EMPTY") == "no price for local; ollama; EMPTY"
    # A longer key is hidden inside other text too (a repr's escaped newline).
    register_secret("plainwordkey")
    assert redact("bad key:\\nplainwordkey.") == "bad key:\\n<redacted>."


def test_a_key_of_one_or_two_characters_is_no_secret_and_garbles_nothing() -> None:
    from langchain_answer_metrics.core.redaction import redact, register_secret

    register_secret("a")
    register_secret("xy")
    assert redact("field 'retrieved_contexts' holds a number; judge-a; xy") == (
        "field 'retrieved_contexts' holds a number; judge-a; xy"
    )
