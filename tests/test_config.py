"""load_config / panel_from_mapping / panel_from_base_url: no network, all offline."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from langchain_core.rate_limiters import InMemoryRateLimiter
from langchain_openai import ChatOpenAI, OpenAIEmbeddings
from pydantic import SecretStr

from langchain_answer_metrics.config import (
    DEFAULT_EMBEDDING_MODEL,
    DEFAULT_JUDGE_MODEL,
    ConfigError,
    Panel,
    exceptions_for_http_codes,
    load_config,
    panel_from_base_url,
    panel_from_mapping,
)
from langchain_answer_metrics.judging.judges import Embedder, Judge, RetryPolicy
from langchain_answer_metrics.judging.request import RequestDeadlineError

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "models.yaml"
FAKE_KEY = "sk-or-v1-FAKEKEY-9f8e7d6c5b4a"
ENV = {"OPENROUTER_API_KEY": FAKE_KEY}


def brief_config(**overrides: Any) -> dict[str, Any]:
    """The schema's reference example, with top-level sections replaceable."""
    config: dict[str, Any] = {
        "providers": {
            "openrouter": {
                "base_url": "https://openrouter.ai/api/v1",
                "api_key_env": "OPENROUTER_API_KEY",
                "rate_limit": 5,
                "timeout": 60,
                "structured_output": "function_calling",
            }
        },
        "retry": {
            "on_http_codes": [429],
            "initial_interval": "2s",
            "max_interval": "30s",
            "multiplier": 2,
            "max_attempts": 4,
        },
        "chat_models": {
            "default_options": {"temperature": 0.0, "max_tokens": 1000, "top_p": 1.0},
            "list": [
                {"id": "anthropic/claude-4.5-sonnet", "provider": "openrouter"},
                {
                    "id": "google/gemini-2.5-flash",
                    "provider": "openrouter",
                    "options": {"temperature": 0.2},
                    "structured_output": "json_schema",
                    "name": "gemini",
                },
            ],
        },
        "embedding_models": {
            "default_options": {"dimensions": 1024},
            "list": [
                {
                    "id": "openai/text-embedding-3-large",
                    "provider": "openrouter",
                    "options": {"dimensions": 3072},
                },
                {"id": "qwen/qwen3-embedding-8b"},
            ],
        },
    }
    config.update(overrides)
    return config


def chat(judge: Judge) -> ChatOpenAI:
    assert isinstance(judge.model, ChatOpenAI)
    return judge.model


def embeddings(embedder: Embedder) -> OpenAIEmbeddings:
    assert isinstance(embedder.model, OpenAIEmbeddings)
    return embedder.model


def config_error(data: Any, env: dict[str, str] | None = None) -> str:
    with pytest.raises(ConfigError) as caught:
        panel_from_mapping(data, env=ENV if env is None else env)
    return str(caught.value)


# --------------------------------------------------------------------------- example file


def test_example_file_loads_with_env_mapping() -> None:
    panel = load_config(EXAMPLE, env=ENV)

    assert [judge.label for judge in panel.judges] == [
        "anthropic/claude-4.5-sonnet",
        "google/gemini-2.5-flash",
        "openai/gpt-4o-mini",
    ]
    assert [embedder.label for embedder in panel.embedders] == [
        "openai/text-embedding-3-large",
        "qwen/qwen3-embedding-8b",
    ]
    assert [embeddings(e).dimensions for e in panel.embedders] == [3072, 1024]
    assert all(chat(j).openai_api_base == "https://openrouter.ai/api/v1" for j in panel.judges)
    assert panel.llm is panel.judges
    assert panel.embeddings is panel.embedders


def test_example_file_reads_os_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", FAKE_KEY)
    panel = load_config(str(EXAMPLE))
    api_key = chat(panel.judges[0]).openai_api_key
    assert isinstance(api_key, SecretStr)
    assert api_key.get_secret_value() == FAKE_KEY


# --------------------------------------------------------------------------- construction


def test_options_merge_onto_chat_models() -> None:
    panel = panel_from_mapping(brief_config(), env=ENV)
    claude, gemini = (chat(judge) for judge in panel.judges)

    assert claude.model_name == "anthropic/claude-4.5-sonnet"
    assert (claude.temperature, claude.max_tokens, claude.top_p) == (0.0, 1000, 1.0)
    # Per-model options override one key; the other defaults stay.
    assert gemini.model_name == "google/gemini-2.5-flash"
    assert (gemini.temperature, gemini.max_tokens, gemini.top_p) == (0.2, 1000, 1.0)
    for model in (claude, gemini):
        assert model.openai_api_base == "https://openrouter.ai/api/v1"
        assert model.request_timeout == 60.0
        assert model.root_client.timeout == 60.0
        assert model.use_responses_api is False


def test_names_and_structured_output_methods() -> None:
    panel = panel_from_mapping(brief_config(), env=ENV)
    claude, gemini = panel.judges

    assert (claude.label, claude.method) == ("anthropic/claude-4.5-sonnet", "function_calling")
    assert (gemini.label, gemini.method) == ("gemini", "json_schema")


def test_one_shared_rate_limiter_per_provider() -> None:
    providers = {
        "fast": {"base_url": "https://a.example/v1", "api_key_env": "A", "rate_limit": 5},
        "slow": {"base_url": "https://b.example/v1", "api_key_env": "B", "rate_limit": 0.5},
        "free": {"base_url": "https://c.example/v1", "api_key_env": "C"},
    }
    data = brief_config(
        providers=providers,
        chat_models={
            "list": [
                {"id": "m1", "provider": "fast"},
                {"id": "m2", "provider": "fast"},
                {"id": "m3", "provider": "slow"},
                {"id": "m4", "provider": "free"},
            ]
        },
        embedding_models={"list": [{"id": "e1", "provider": "fast"}]},
    )
    panel = panel_from_mapping(data, env={"A": "a", "B": "b", "C": "c"})
    m1, m2, m3, m4 = (chat(judge).rate_limiter for judge in panel.judges)

    assert isinstance(m1, InMemoryRateLimiter)
    assert isinstance(m3, InMemoryRateLimiter)
    assert m1 is m2
    assert panel.embedders[0].rate_limiter is m1  # chat and embeddings share the provider's
    assert m3 is not m1
    assert m1.requests_per_second == 5
    assert m3.requests_per_second == 0.5
    assert m4 is None


def test_retry_section_moves_retries_to_the_policy() -> None:
    panel = panel_from_mapping(brief_config(), env=ENV)

    for judge in panel.judges:
        model = chat(judge)
        assert model.max_retries == 0
        assert model.root_client.max_retries == 0
        assert model.root_async_client.max_retries == 0
        assert judge.retry == RetryPolicy(
            retry_on=(openai.RateLimitError,),
            initial_delay=2.0,
            max_delay=30.0,
            multiplier=2.0,
            max_attempts=4,
        )
    for embedder in panel.embedders:
        assert embeddings(embedder).max_retries == 0
        assert embedder.retry is panel.judges[0].retry


def test_without_retry_section_the_client_retries_and_no_policy() -> None:
    data = brief_config()
    del data["retry"]
    panel = panel_from_mapping(data, env=ENV)

    for judge in panel.judges:
        assert judge.retry is None
        assert chat(judge).root_client.max_retries == 2
    for embedder in panel.embedders:
        assert embedder.retry is None
        assert embeddings(embedder).max_retries == 2


def test_empty_http_code_list_turns_retries_off() -> None:
    panel = panel_from_mapping(brief_config(retry={"on_http_codes": []}), env=ENV)

    assert panel.judges[0].retry is None
    assert chat(panel.judges[0]).root_client.max_retries == 0


def _route_to(model: ChatOpenAI, handler: Any) -> None:
    # Same client settings (max_retries, timeout), but requests go to ``handler``.
    root = model.root_client.with_options(
        http_client=httpx.Client(transport=httpx.MockTransport(handler))
    )
    model.client = root.chat.completions


def _rate_limited(requests: list[httpx.Request]) -> Any:
    def handler(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        # retry-after-ms keeps the openai client's own backoff (when it retries) short.
        return httpx.Response(
            429, json={"error": {"message": "slow down"}}, headers={"retry-after-ms": "1"}
        )

    return handler


def test_retries_come_from_one_layer_only() -> None:
    retry = {"on_http_codes": [429], "initial_interval": 0, "max_interval": 0, "max_attempts": 3}
    data = brief_config(retry=retry, chat_models={"list": [{"id": "m"}]})
    del data["providers"]["openrouter"]["rate_limit"]
    judge = panel_from_mapping(data, env=ENV).judges[0]
    assert judge.retry is not None
    requests: list[httpx.Request] = []
    _route_to(chat(judge), _rate_limited(requests))

    with pytest.raises(openai.RateLimitError):
        judge.retry.wrap(judge.model).invoke("hi")
    assert len(requests) == 3  # max_attempts, not multiplied by client retries

    del data["retry"]
    judge = panel_from_mapping(data, env=ENV).judges[0]
    requests.clear()
    _route_to(chat(judge), _rate_limited(requests))
    with pytest.raises(openai.RateLimitError):
        judge.model.invoke("hi")
    assert len(requests) == 3  # 1 + the client's 2 retries


@pytest.mark.parametrize(
    ("codes", "expected"),
    [
        ([429], (openai.RateLimitError,)),
        ([409], (openai.ConflictError,)),
        # RequestDeadlineError: the package's own whole-request deadline, a timeout too.
        ([408], (openai.APITimeoutError, openai.APIConnectionError, RequestDeadlineError)),
        ([502], (openai.InternalServerError, openai.APIConnectionError, RequestDeadlineError)),
        (
            [429, 500, 503],
            (
                openai.RateLimitError,
                openai.InternalServerError,
                openai.APIConnectionError,
                RequestDeadlineError,
            ),
        ),
    ],
)
def test_http_codes_map_to_openai_exceptions(
    codes: list[int], expected: tuple[type[BaseException], ...]
) -> None:
    assert exceptions_for_http_codes(codes) == expected


def _failing(status: int | str) -> Any:
    def handler(request: httpx.Request) -> httpx.Response:
        if status == "timeout":
            raise httpx.ReadTimeout("timed out", request=request)
        if status == "connect":
            raise httpx.ConnectError("refused", request=request)
        assert isinstance(status, int)
        return httpx.Response(status, json={"error": {"message": "boom"}})

    return handler


@pytest.mark.parametrize(
    ("status", "code"),
    [(429, 429), (409, 409), (500, 500), (502, 502), (503, 503), (504, 504), ("timeout", 408)],
)
def test_what_langchain_openai_raises_is_caught_by_the_mapping(
    status: int | str, code: int
) -> None:
    # Pins that ChatOpenAI's wrapped errors still derive from the openai classes, and
    # that OpenAIEmbeddings raises those classes too.
    retry_on = exceptions_for_http_codes([code])
    client = httpx.Client(transport=httpx.MockTransport(_failing(status)))
    common: dict[str, Any] = {"base_url": "http://gw.test/v1", "api_key": "k", "max_retries": 0}
    model = ChatOpenAI(model="m", use_responses_api=False, http_client=client, **common)
    embedder = OpenAIEmbeddings(
        model="e", check_embedding_ctx_length=False, http_client=client, **common
    )

    with pytest.raises(retry_on):
        model.invoke("hi")
    with pytest.raises(retry_on):
        embedder.embed_query("hi")


def test_client_errors_are_not_retried() -> None:
    retry_on = exceptions_for_http_codes([408, 409, 429, 500, 502, 503, 504])
    client = httpx.Client(transport=httpx.MockTransport(_failing(400)))
    model = ChatOpenAI(
        model="m",
        base_url="http://gw.test/v1",
        api_key="k",
        max_retries=0,
        use_responses_api=False,
        http_client=client,
    )
    with pytest.raises(openai.BadRequestError) as caught:
        model.invoke("hi")
    assert not isinstance(caught.value, retry_on)


def test_embedding_models() -> None:
    panel = panel_from_mapping(brief_config(), env=ENV)
    large, qwen = (embeddings(embedder) for embedder in panel.embedders)

    assert (large.model, large.dimensions) == ("openai/text-embedding-3-large", 3072)
    assert (qwen.model, qwen.dimensions) == ("qwen/qwen3-embedding-8b", 1024)
    for model in (large, qwen):
        assert model.check_embedding_ctx_length is False
        assert model.openai_api_base == "https://openrouter.ai/api/v1"
        assert model.request_timeout == 60.0


def test_single_provider_may_be_omitted_and_batch_size_passes_through() -> None:
    data = brief_config(embedding_models={"list": [{"id": "e", "batch_size": 16}]})
    panel = panel_from_mapping(data, env=ENV)
    assert panel.embedders[0].batch_size == 16
    assert embeddings(panel.embedders[0]).dimensions is None


@pytest.mark.parametrize(
    ("value", "seconds"),
    [(2, 2.0), (0.5, 0.5), ("2s", 2.0), ("2000ms", 2.0), ("1.5s", 1.5), ("1m", 60.0), ("3", 3.0)],
)
def test_durations(value: Any, seconds: float) -> None:
    retry = {"initial_interval": value, "max_interval": "10m"}
    judge = panel_from_mapping(brief_config(retry=retry), env=ENV).judges[0]
    assert judge.retry is not None
    assert judge.retry.initial_delay == seconds


def test_local_provider_needs_no_key() -> None:
    data = {
        "providers": {"ollama": {"base_url": "http://localhost:11434/v1"}},
        "chat_models": {"list": [{"id": "qwen2.5:7b"}]},
    }
    panel = panel_from_mapping(data, env={})
    assert chat(panel.judges[0]).openai_api_base == "http://localhost:11434/v1"


# --------------------------------------------------------------------------- errors


def _with(path: str, value: Any) -> dict[str, Any]:
    """brief_config() with one nested value replaced; ``path`` like 'a.b.0.c'."""
    data = brief_config()
    node: Any = data
    *parents, last = path.split(".")
    for part in parents:
        node = node[int(part)] if part.isdigit() else node[part]
    if value is _DELETE:
        del node[last]
    else:
        node[int(last) if last.isdigit() else last] = value
    return data


_DELETE = object()


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            _with("chat_models.list.1.options", {"temprature": 0.1}),
            "chat_models.list[1].options.temprature: unknown key (did you mean temperature?)",
        ),
        (
            _with("chat_models.default_options", {"max-tokens": 10}),
            "chat_models.default_options.max-tokens: unknown key (did you mean max_tokens?)",
        ),
        (_with("colour", "blue"), "colour: unknown key"),
        (_with("providers.openrouter.rate_limit", -1), "providers.openrouter.rate_limit: must be"),
        (_with("providers.openrouter.rate_limit", 0), "providers.openrouter.rate_limit: must be"),
        (
            _with("providers.openrouter.structured_output", "xml"),
            "providers.openrouter.structured_output: must be one of function_calling",
        ),
        (
            _with("chat_models.list.0.structured_output", "tools"),
            "chat_models.list[0].structured_output: must be one of",
        ),
        (
            _with("chat_models.list.0.provider", "openai"),
            "chat_models.list[0].provider: unknown provider 'openai' (configured: openrouter)",
        ),
        (
            _with("retry.initial_interval", "2 secs"),
            "retry.initial_interval: '2 secs' is not a duration",
        ),
        (_with("providers.openrouter.timeout", "soon"), "providers.openrouter.timeout: 'soon'"),
        (_with("providers.openrouter.timeout", 0), "providers.openrouter.timeout: must be"),
        (
            _with("retry.on_http_codes", [429, 404]),
            "retry.on_http_codes[1]: 404 is not a retryable HTTP code",
        ),
        (_with("retry.max_attempts", 0), "retry.max_attempts: must be"),
        (_with("retry.max_interval", "1s"), "retry: max_interval must not be shorter"),
        (_with("chat_models.default_options.temperature", 3), "temperature: must be"),
        (_with("chat_models.list.0.id", _DELETE), "chat_models.list[0].id: required key"),
        (_with("chat_models.list", {"id": "x"}), "chat_models.list: must be a list"),
        (_with("providers.openrouter.base_url", "openrouter.ai"), "base_url: must be an http"),
        (
            {"providers": {}, "chat_models": {"list": [{"id": "m"}]}},
            "providers: at least one provider is required",
        ),
        ({"providers": brief_config()["providers"]}, "no chat or embedding models"),
    ],
)
def test_errors_name_the_key(data: dict[str, Any], expected: str) -> None:
    assert expected in config_error(data)


def test_several_providers_require_a_provider_reference() -> None:
    providers = {
        "a": {"base_url": "https://a.example/v1", "api_key_env": "A"},
        "b": {"base_url": "https://b.example/v1", "api_key_env": "B"},
    }
    data = {
        "providers": providers,
        "chat_models": {"list": [{"id": "m", "provider": "a"}, {"id": "n"}]},
    }
    message = config_error(data, env={"A": "a", "B": "b"})
    assert "chat_models.list[1].provider: required when several providers" in message


def test_missing_environment_variable_names_the_key_and_variable() -> None:
    message = config_error(brief_config(), env={})
    assert message == (
        "config: providers.openrouter.api_key_env: "
        "environment variable OPENROUTER_API_KEY is not set"
    )


def test_remote_provider_without_api_key_env() -> None:
    data = _with("providers.openrouter.api_key_env", _DELETE)
    assert "providers.openrouter.api_key_env: required for https://openrouter.ai" in (
        config_error(data)
    )


def test_all_problems_are_reported_together() -> None:
    data = _with("chat_models.list.1.options", {"temprature": 0.1})
    data["retry"]["on_http_codes"] = [404]
    with pytest.raises(ConfigError) as caught:
        panel_from_mapping(data, env=ENV)
    assert [path for path, _ in caught.value.problems] == [
        "retry.on_http_codes[0]",
        "chat_models.list[1].options.temprature",
    ]
    assert str(caught.value).startswith("config: 2 problems:\n")


def test_file_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"cannot read config file .*missing\.yaml"):
        load_config(tmp_path / "missing.yaml", env=ENV)

    broken = tmp_path / "broken.yaml"
    broken.write_text("providers:\n  openrouter: {base_url: [\n")
    with pytest.raises(ConfigError, match=r"broken.yaml: invalid YAML at line \d+, column \d+"):
        load_config(broken, env=ENV)

    empty = tmp_path / "empty.yaml"
    empty.write_text("# nothing\n")
    with pytest.raises(ConfigError, match=r"empty\.yaml: the file is empty"):
        load_config(empty, env=ENV)

    listing = tmp_path / "list.yaml"
    listing.write_text("- id: m\n")
    with pytest.raises(ConfigError, match=r"list\.yaml: the top level must be a mapping"):
        load_config(listing, env=ENV)

    typo = tmp_path / "typo.yaml"
    typo.write_text(EXAMPLE.read_text().replace("max_tokens: 1000", "max_token: 1000"))
    with pytest.raises(ConfigError, match=r"typo.yaml: chat_models.default_options.max_token"):
        load_config(typo, env=ENV)


# --------------------------------------------------------------------------- no file


def test_environment_defaults_without_a_file() -> None:
    panel = load_config(env={"OPENAI_API_KEY": FAKE_KEY})

    (judge,) = panel.judges
    (embedder,) = panel.embedders
    assert chat(judge).model_name == DEFAULT_JUDGE_MODEL == "gpt-4o-mini"
    assert chat(judge).openai_api_base == "https://api.openai.com/v1"
    assert chat(judge).use_responses_api is False
    assert embeddings(embedder).model == DEFAULT_EMBEDDING_MODEL == "text-embedding-3-small"
    assert embeddings(embedder).check_embedding_ctx_length is False
    assert judge.retry is None
    assert chat(judge).root_client.max_retries == 2


def test_environment_overrides_without_a_file() -> None:
    panel = load_config(
        env={
            "OPENAI_API_KEY": FAKE_KEY,
            "OPENAI_BASE_URL": "https://proxy.example/v1",
            "ANSWER_METRICS_JUDGE_MODEL": "gpt-4.1-mini",
            "ANSWER_METRICS_EMBEDDING_MODEL": "text-embedding-3-large",
        }
    )
    assert chat(panel.judges[0]).model_name == "gpt-4.1-mini"
    assert chat(panel.judges[0]).openai_api_base == "https://proxy.example/v1"
    assert embeddings(panel.embedders[0]).model == "text-embedding-3-large"
    assert embeddings(panel.embedders[0]).openai_api_base == "https://proxy.example/v1"


def test_missing_openai_api_key_explains_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ConfigError) as caught:
        load_config()
    message = str(caught.value)
    assert "OPENAI_API_KEY is not set" in message
    assert "config file" in message


def test_panel_from_base_url() -> None:
    local = panel_from_base_url(
        "http://127.0.0.1:8000/v1", model="llama", embedding_model="nomic", env={}
    )
    assert chat(local.judges[0]).model_name == "llama"
    assert chat(local.judges[0]).openai_api_base == "http://127.0.0.1:8000/v1"
    assert chat(local.judges[0]).use_responses_api is False
    assert embeddings(local.embedders[0]).model == "nomic"

    no_embeddings = panel_from_base_url(
        "http://localhost:11434/v1", model="llama", embedding_model=None, env={}
    )
    assert no_embeddings.embedders == []

    with pytest.raises(ConfigError, match="environment variable GW_KEY is not set"):
        panel_from_base_url(
            "https://gw.example/v1", model="m", embedding_model=None, api_key_env="GW_KEY", env={}
        )
    remote = panel_from_base_url(
        "https://gw.example/v1",
        model="m",
        embedding_model=None,
        api_key_env="GW_KEY",
        env={"GW_KEY": FAKE_KEY},
    )
    api_key = chat(remote.judges[0]).openai_api_key
    assert isinstance(api_key, SecretStr)
    assert api_key.get_secret_value() == FAKE_KEY

    with pytest.raises(ConfigError, match="base_url: must be an http"):
        panel_from_base_url("localhost:8000", model="m", embedding_model=None, env={})


# --------------------------------------------------------------------------- hygiene


@pytest.mark.slow  # a fresh interpreter
def test_importing_config_does_not_import_openai() -> None:
    code = (
        "import sys, langchain_answer_metrics.config\n"
        "loaded = [m for m in ('openai', 'langchain_openai') if m in sys.modules]\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=EXAMPLE.parents[1])


def _config_errors_near_the_key(tmp_path: Path) -> list[str]:
    """Messages of errors a user could make with the key at hand (pasted in odd places)."""
    cases: list[Any] = [
        _with("providers.openrouter.api_key_env", FAKE_KEY),
        _with("providers.openrouter.api_key", FAKE_KEY),
        _with("providers.openrouter.base_url", FAKE_KEY),
        _with("chat_models.list.0.options", {"temprature": 0.1}),
        _with("chat_models.list.0.id", {FAKE_KEY: 1}),
    ]
    messages = [config_error(case) for case in cases]
    broken = tmp_path / "broken.yaml"
    broken.write_text(f"providers:\n  openrouter: {{api_key: {FAKE_KEY}: oops}}\n")
    with pytest.raises(ConfigError) as caught:
        load_config(broken, env=ENV)
    messages.append(str(caught.value))
    with pytest.raises(ConfigError) as caught:
        panel_from_base_url(
            f"https://u:{FAKE_KEY}@gw.example/v1", model="m", embedding_model=None, env={}
        )
    messages.append(str(caught.value))
    return messages


def test_secrets_never_leak(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG):
        panels: list[Panel] = [
            load_config(EXAMPLE, env=ENV),
            load_config(env={"OPENAI_API_KEY": FAKE_KEY}),
            panel_from_base_url(
                "https://gw.example/v1",
                model="m",
                embedding_model="e",
                env={"OPENAI_API_KEY": FAKE_KEY},
            ),
        ]
        messages = _config_errors_near_the_key(tmp_path)
    assert "model panel from" in caplog.text  # logging did happen

    texts = [caplog.text, *messages]
    for panel in panels:
        texts += [repr(panel), str(panel), panel.model_dump_json(), str(panel.model_dump())]
        members: list[Judge | Embedder] = [*panel.judges, *panel.embedders]
        texts += [repr(member) for member in members]
        texts += [str(member) for member in members]
        texts += [repr(member.model) for member in members]
    for text in texts:
        assert FAKE_KEY not in text
        assert "FAKEKEY" not in text


def test_dump_describes_the_panel() -> None:
    dumped = panel_from_mapping(brief_config(), env=ENV).model_dump()
    assert dumped["judges"][1] == {
        "name": "gemini",
        "model": "google/gemini-2.5-flash",
        "base_url": "https://openrouter.ai/api/v1",
        "method": "json_schema",
        "temperature": 0.2,
        "max_tokens": 1000,
        "top_p": 1.0,
        "retry": {
            "retry_on": ["RateLimitError"],
            "max_attempts": 4,
            "initial_delay": 2.0,
            "max_delay": 30.0,
            "multiplier": 2.0,
        },
    }
    assert dumped["embedders"][0]["dimensions"] == 3072
