"""Secrets stay hidden in every form they travel in: raw, in a Basic ``Authorization``
header (base64 of ``user:password``), after ``Bearer``, in the text of judges and
metrics, and in the HTTP libraries' log lines."""

from __future__ import annotations

import base64
import io
import json
import logging
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest
from langchain_openai import ChatOpenAI, OpenAIEmbeddings
from support import answer_metrics

from langchain_answer_metrics import AnswerCorrectness, Faithfulness, SemanticSimilarity
from langchain_answer_metrics.core.redaction import (
    HTTP_LOGGERS,
    redact,
    register_secret,
    register_url_credentials,
)
from langchain_answer_metrics.judging.judges import Embedder, Judge
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer
from langchain_answer_metrics.testing.transport import STOP_POLL_SECONDS

USER = "gateway-bob"
PASSWORD = "sk-url-pass-7Hq2Zt9Lm4"
KEY = "sk-env-key-Rx81Vb5Nc3"


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


FORMS = {
    "raw password": PASSWORD,
    "Basic user:password": b64(f"{USER}:{PASSWORD}"),
    "base64 password": b64(PASSWORD),
    "raw key": KEY,
    "base64 key": b64(KEY),
    "Basic :key": b64(f":{KEY}"),
}


def assert_clean(where: str, text: str) -> None:
    for form, value in FORMS.items():
        assert value not in text, f"{form} in {where}: {text[:400]!r}"


def test_basic_and_bearer_forms_of_registered_secrets_are_redacted() -> None:
    register_url_credentials(f"http://{USER}:{PASSWORD}@example.test/v1")
    register_secret(KEY)
    quoted = (
        f"Incorrect API key provided: Basic {b64(f'{USER}:{PASSWORD}')}; also Bearer {KEY}, "
        f"Basic {b64(f':{KEY}')}, Basic {b64(f'{KEY}:')}, {b64(PASSWORD)}"
    )
    cleaned = redact(quoted)
    assert_clean("redact()", cleaned)
    assert cleaned.count("<redacted>") == 5
    assert "Bearer <redacted>" in cleaned and "Basic <redacted>" in cleaned


def test_a_percent_encoded_password_is_redacted_as_httpx_sends_it() -> None:
    register_url_credentials("http://alice:p%40ss-word-91@example.test/v1")
    sent = b64("alice:p@ss-word-91")  # httpx decodes the userinfo before encoding it
    assert redact(f"Basic {sent}") == "Basic <redacted>"
    assert redact("p@ss-word-91") == "<redacted>"


@pytest.fixture
def url_model() -> Iterator[tuple[ChatOpenAI, OpenAIEmbeddings]]:
    url = f"http://{USER}:{PASSWORD}@127.0.0.1:9/v1"
    yield (
        ChatOpenAI(base_url=url, api_key=KEY, model="judge-a", use_responses_api=False),
        OpenAIEmbeddings(base_url=url, api_key=KEY, model="embed-a"),
    )


def test_judges_and_metrics_never_show_the_url_password(
    url_model: tuple[ChatOpenAI, OpenAIEmbeddings],
) -> None:
    chat, embeddings = url_model
    objects = [
        Judge(model=chat),
        Embedder(model=embeddings),
        Faithfulness(llm=chat),
        SemanticSimilarity(embeddings=embeddings),
        AnswerCorrectness(llm=chat, embeddings=embeddings),
    ]
    for item in objects:
        name = type(item).__name__
        for how, text in {
            "str": str(item),
            "format": f"{item}",
            "repr": repr(item),
            "model_dump": str(item.model_dump()),
            "model_dump_json": item.model_dump_json(),
        }.items():
            assert_clean(f"{how}({name})", text)
            assert USER not in text, f"{how}({name})"
    # The dump still describes the model: its class's fields, the endpoint without them.
    dumped = Judge(model=chat).model_dump()["model"]
    assert dumped["model_name"] == "judge-a"
    assert "127.0.0.1:9" in str(dumped)


def test_httpx_log_lines_are_redacted_for_any_handler(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A user's own logging set-up: a handler on the root logger, formatting every record.
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        with caplog.at_level(logging.DEBUG), LocalOpenAIServer() as server:
            url = server.base_url.replace("http://", f"http://{USER}:{PASSWORD}@")
            model = ChatOpenAI(
                base_url=url,
                api_key="sk-test",
                model="judge-a",
                use_responses_api=False,
                max_retries=0,
            )
            model.invoke("hello")
    finally:
        root.removeHandler(handler)
    requests = [r for r in caplog.records if "HTTP Request" in r.getMessage()]
    assert requests, "httpx logged no request line: the test would prove nothing"
    assert all(r.name in HTTP_LOGGERS for r in requests)
    for record in caplog.records:
        assert_clean(f"log record of {record.name}", record.getMessage())
    assert_clean("the user's handler", stream.getvalue())
    assert "<redacted>@127.0.0.1" in stream.getvalue()


# --------------------------------------------------------------------------- the CLI


class _Echo401(BaseHTTPRequestHandler):
    """A provider that quotes the Authorization header back in its 401."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = json.dumps(
            {
                "error": {
                    "message": f"Incorrect API key: {self.headers.get('Authorization')}",
                    "type": "invalid_request_error",
                    "code": "invalid_api_key",
                }
            }
        ).encode()
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        type(self).seen.append(self.headers.get("Authorization", ""))

    seen: ClassVar[list[str]] = []

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def echo_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo401)
    # The loop looks for shutdown() this often (0.5 s by default, waited at every teardown).
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": STOP_POLL_SECONDS}, daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def test_a_401_quoting_basic_auth_leaks_nothing_from_the_cli(
    tmp_path: Path, echo_server: str
) -> None:
    data = tmp_path / "qa.jsonl"
    data.write_text(
        json.dumps(
            {
                "id": "a",
                "question": "Capital of France?",
                "answer": "Paris.",
                "contexts": ["Paris is the capital of France."],
            }
        )
        + "\n",
        encoding="utf-8",
    )
    out, report, summary = tmp_path / "out.jsonl", tmp_path / "r.html", tmp_path / "s.json"
    url = echo_server.replace("http://", f"http://{USER}:{PASSWORD}@")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LANGSMITH_"))}
    env.update(OPENAI_API_KEY=KEY, LANGSMITH_TRACING="false", LANGSMITH_TEST_TRACKING="false")
    _Echo401.seen.clear()
    result = answer_metrics(
        "evaluate",
        data,
        "--metric",
        "faithfulness",
        "--base-url",
        url,
        "--model",
        "judge-a",
        "--quiet",
        "--out",
        out,
        "--report",
        report,
        "--summary-json",
        summary,
        "--allow-errors",
        env=env,
        timeout=300,
    )
    assert _Echo401.seen, result.stderr  # the provider was asked, and quoted the header
    assert any(header.startswith("Basic ") for header in _Echo401.seen)
    assert out.exists() and report.exists(), result.stderr
    assert "Incorrect API key" in out.read_text("utf-8")  # the error itself is kept
    for where, text in {
        "stdout": result.stdout,
        "stderr": result.stderr,
        "--out": out.read_text("utf-8"),
        "--report": report.read_text("utf-8"),
        "--summary-json": summary.read_text("utf-8"),
    }.items():
        assert_clean(where, text)


def test_log_redaction_survives_the_user_s_logging_config() -> None:
    # dictConfig replaces a logger's handlers and level, and adds its own filters: ours stay.
    import logging.config

    stream = io.StringIO()
    names = ("httpx", "httpx2")
    saved = {
        name: (logging.getLogger(name).level, logging.getLogger(name).propagate) for name in names
    }
    logging.config.dictConfig(
        {
            "version": 1,
            "disable_existing_loggers": False,
            "handlers": {"mine": {"class": "logging.StreamHandler", "stream": stream}},
            "loggers": {
                name: {"handlers": ["mine"], "level": "INFO", "propagate": False} for name in names
            },
        }
    )
    try:
        for name in names:
            logging.getLogger(name).info(
                'HTTP Request: POST %s "HTTP/1.1 401"', f"http://{USER}:{PASSWORD}@h.test/v1"
            )
    finally:
        for name, (level, propagate) in saved.items():
            logger = logging.getLogger(name)
            for handler in list(logger.handlers):
                logger.removeHandler(handler)
            logger.setLevel(level)
            logger.propagate = propagate
    text = stream.getvalue()
    assert text.count("HTTP Request: POST http://<redacted>@h.test/v1") == 2, text
    assert_clean("a dictConfig handler", text)
    assert USER not in text


def test_a_key_of_a_model_handed_straight_to_a_metric_is_redacted(echo_server: str) -> None:
    # No Panel, no config: the metric's judge registers its model's key when built.
    from langchain_answer_metrics.run.runner import evaluate

    key = "sk-inproc-key-Pq7Wd2Lx9"
    model = ChatOpenAI(
        base_url=echo_server, api_key=key, model="judge-a", use_responses_api=False, max_retries=0
    )
    rows = evaluate(
        [
            {
                "user_input": "q",
                "response": "Paris is in France.",
                "retrieved_contexts": ["Paris is the capital of France."],
            }
        ],
        [Faithfulness(llm=model)],
    )
    shown = repr(rows[0].errors) + str(rows[0].results)
    assert "401" in shown and "Bearer <redacted>" in shown
    assert key not in shown and b64(key) not in shown


def test_a_key_that_is_one_plain_word_is_a_placeholder_not_a_secret() -> None:
    # Local servers take any key; "local", "ollama", "offline" are what users pass.
    for word in ("local", "ollama", "offline", "lm-studio"):
        register_secret(word)
    assert redact("no price for local; ollama served it offline") == (
        "no price for local; ollama served it offline"
    )
    register_secret("sk-word-key-55Tq")
    assert redact("key sk-word-key-55Tq") == "key <redacted>"
    # A password written into a URL is one, however plain.
    register_url_credentials("http://bob:hunter@example.test/v1")
    assert redact("password hunter") == "password <redacted>"
