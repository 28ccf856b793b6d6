"""Where a model's requests go, and the circuit breaker that stops a run when one endpoint
keeps failing.

An *endpoint* is ``scheme://host:port``, never a path, a query or credentials: what may be
shown of it in any message (:func:`endpoint_of` finds it on a model, looking at
``openai_api_base`` / ``base_url`` and the model's client; ``ChatOpenAI`` and
``OpenAIEmbeddings`` without one go to ``https://api.openai.com:443``).

Every attempt of a request to a model with a known endpoint is sent through
:class:`EndpointRequest`, the layer inside the retry policy (see :mod:`.request`), so it
sees each attempt, retries included:

- an attempt that fails with an *endpoint failure* (:func:`is_endpoint_failure`: a
  connection error, a timeout, HTTP 5xx) is named after its endpoint: the error's text
  in results reads ``"APIConnectionError at http://127.0.0.1:8011: Connection error."``
  (:func:`error_text`);
- within the current run scope, consecutive failed attempts are counted per judge (a
  judge's requests, whatever endpoint others share with it; an embedder's per
  endpoint), and among them the *silent* timeouts: those during whose whole wait the endpoint
  replied to nothing. An attempt that got a reply (a success, or an error such as a 400,
  401 or 429 that is not an endpoint failure) resets its endpoint's counts;
- a judge is excluded for the rest of the run (:mod:`.judge_health`; the run stops
  when no judge is left), an embedder's endpoint stops the scope (:class:`~.scope.Halt`
  ``"circuit_breaker"``, aborting the samples in flight), when the failures in a row
  reach the scope's
  ``max_consecutive_failures``, or the silent timeouts in a row reach
  :data:`TIMEOUTS_TO_TRIP` (or ``max_consecutive_failures`` if lower): each costs a
  whole deadline with nothing heard, so three mean the endpoint is not answering. A slow
  request sent beside others that were answered is not such evidence, however many of
  them time out together. The runner then admits no more samples and reports the rest
  as not run.

How long a silent endpoint takes to stop a run, with the request deadline ``T`` (a
config's ``timeout:``, else 120 s): about ``T`` when three or more requests are in
flight (the runner's usual case), at worst ``3 * T`` plus two backoff waits when
requests go one at a time. Without a ``retry:`` section the openai client's own two
retries happen inside one attempt, which the deadline still ends at ``T``.

Only the runner sets ``max_consecutive_failures`` on its scope (``evaluate(...,
max_consecutive_failures=20)``, the CLI's ``--max-consecutive-failures``, the config
file's ``retry.max_consecutive_failures``). The scopes of ``metric.batch`` / ``abatch``
count too, but nothing stops them: each of their samples reports its own error.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from typing import Any, TypeVar
from urllib.parse import urlsplit

from langchain_core.runnables import Runnable, RunnableConfig

from langchain_answer_metrics.core.redaction import (
    redact,
    register_url_credentials,
    strip_url_credentials,
)
from langchain_answer_metrics.judging import judge_health
from langchain_answer_metrics.judging.deadline import RequestLimitError
from langchain_answer_metrics.judging.model_facts import optional_attribute
from langchain_answer_metrics.judging.scope import EndpointHealth, Halt, current_scope

__all__ = [
    "MAX_CONSECUTIVE_FAILURES_SETTING",
    "OPENAI_ENDPOINT",
    "TIMEOUTS_TO_TRIP",
    "EndpointRequest",
    "endpoint_of",
    "error_endpoint",
    "error_name",
    "error_text",
    "is_endpoint_failure",
    "normalise_endpoint",
]

InT = TypeVar("InT")
OutT = TypeVar("OutT")

TIMEOUTS_TO_TRIP = 3
"""Timed-out attempts in a row at one endpoint, each with no reply from it while it
waited, that stop a run (if ``max_consecutive_failures`` is not lower)."""

MAX_CONSECUTIVE_FAILURES_SETTING = 10_000
"""The most a config file or the CLI may set (a typo guard; Python takes any count)."""

OPENAI_ENDPOINT = "https://api.openai.com:443"
"""Where ``ChatOpenAI`` and ``OpenAIEmbeddings`` send requests when given no base URL."""

# Model fields holding the URL requests go to, by provider package.
_URL_FIELDS = (
    "openai_api_base",
    "base_url",
    "azure_endpoint",
    "anthropic_api_url",
    "api_base",
    "api_url",
    "endpoint_url",
)
# Attributes holding the model's SDK client, whose ``base_url`` is where it sends.
_CLIENT_FIELDS = ("root_client", "root_async_client", "client", "async_client")
_DEFAULT_PORTS = {"https": 443, "http": 80}
# Set on an error once it is known to be an endpoint failure: the endpoint it came from.
_ENDPOINT_ATTRIBUTE = "_answer_metrics_endpoint"


def normalise_endpoint(url: Any) -> str | None:
    """``scheme://host:port`` of ``url`` (credentials, path and query dropped; the
    scheme's port when none is given), or None if it is not a URL with a host."""
    if url is None:
        return None
    text = str(url).strip()
    if "://" not in text:
        return None
    register_url_credentials(text)  # in case the URL itself is shown elsewhere
    try:
        parts = urlsplit(strip_url_credentials(text))
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if not host or not scheme:
        return None
    if ":" in host:  # IPv6
        host = f"[{host}]"
    port = port or _DEFAULT_PORTS.get(scheme)
    return f"{scheme}://{host}:{port}" if port else f"{scheme}://{host}"


def endpoint_of(model: Any) -> str | None:
    """The endpoint ``model`` sends its requests to, or None when it has none known (a
    local model, a test double). Pass the model itself, not a wrapper of it
    (:func:`~.judges.wrapped_model` finds it)."""
    configured = _attribute(model, "_default_config")  # init_chat_model(...)
    if isinstance(configured, dict):
        found = normalise_endpoint(_string(configured.get("base_url")))
        if found is not None:
            return found
        # Any other attribute would build the configurable model (which may need a key).
        return OPENAI_ENDPOINT if configured.get("model_provider") == "openai" else None
    for name in _URL_FIELDS:
        found = normalise_endpoint(_string(_attribute(model, name)))
        if found is not None:
            return found
    for name in _CLIENT_FIELDS:
        client = _attribute(model, name)
        for candidate in (client, _attribute(client, "_client")):
            found = normalise_endpoint(_attribute(candidate, "base_url"))
            if found is not None:
                return found
    if type(model).__module__.startswith("langchain_openai"):
        return OPENAI_ENDPOINT
    return None


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _attribute(value: Any, name: str) -> Any:
    """``value.name``, or None if reading it fails in any way (a model's ``__getattr__``
    may do more than look up)."""
    if value is None:
        return None
    try:
        return optional_attribute(value, name)
    except Exception:
        return None


def is_endpoint_failure(error: BaseException) -> bool:
    """Whether ``error`` says the endpoint is down or failing, not that the request was
    wrong: a connection error, a timeout, or an HTTP status of 500 and above.

    4xx replies (a bad request, a wrong key, a rate limit) are not: the endpoint answered.
    """
    if isinstance(error, (ConnectionError, TimeoutError, asyncio.TimeoutError)):
        return True
    # langchain-core's provider-neutral classes, which provider packages raise.
    core = sys.modules.get("langchain_core.exceptions")
    model_errors = ("ModelConnectionError", "ModelTimeoutError", "ModelAPIError")
    if core is not None and isinstance(
        error, tuple(getattr(core, name) for name in model_errors if hasattr(core, name))
    ):
        return True
    # Only modules already imported can have raised their errors: nothing is imported here.
    openai = sys.modules.get("openai")
    if openai is not None and isinstance(
        error, (openai.APIConnectionError, openai.InternalServerError)
    ):
        return True  # APIConnectionError covers APITimeoutError
    httpx = sys.modules.get("httpx")
    if httpx is not None and isinstance(error, (httpx.TimeoutException, httpx.NetworkError)):
        return True
    status = getattr(error, "status_code", None)
    if status is None:
        status = getattr(getattr(error, "response", None), "status_code", None)
    return isinstance(status, int) and not isinstance(status, bool) and status >= 500


def is_timeout(error: BaseException) -> bool:
    """Whether ``error`` is a timeout: the endpoint kept the request for a whole deadline."""
    if isinstance(error, (TimeoutError, asyncio.TimeoutError)):
        return True
    core = sys.modules.get("langchain_core.exceptions")
    if core is not None and isinstance(error, getattr(core, "ModelTimeoutError", ())):
        return True
    openai = sys.modules.get("openai")
    if openai is not None and isinstance(error, openai.APITimeoutError):
        return True
    httpx = sys.modules.get("httpx")
    return httpx is not None and isinstance(error, httpx.TimeoutException)


def limit_error(error: BaseException) -> RequestLimitError | None:
    """The package's limit (deadline, reply size) behind ``error``, if one is: the error
    itself or one it was raised from (the openai SDK wraps the HTTP client's)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, RequestLimitError):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def error_endpoint(error: BaseException) -> str | None:
    """The endpoint an endpoint failure came from (None for any other error)."""
    endpoint = getattr(error, _ENDPOINT_ATTRIBUTE, None)
    return endpoint if isinstance(endpoint, str) else None


def error_text(error: BaseException) -> str:
    """The text of ``error`` for results: an endpoint failure names its endpoint,
    ``"APIConnectionError at http://127.0.0.1:8011: Connection error."``. Not redacted."""
    text = _described(error)
    endpoint = error_endpoint(error)
    if endpoint is None:
        return text
    named = f"{error_name(error)} at {endpoint}"
    return f"{named}: {text}" if text else named


def _described(error: BaseException) -> str:
    """``str(error)``, with the package's limit behind it if one is."""
    text = str(error)
    limit = limit_error(error)
    if limit is not None and limit is not error:
        # "Request timed out." alone would not say it was the whole request's deadline.
        return f"{text} ({limit})" if text else str(limit)
    return text


def error_name(error: BaseException) -> str:
    """The name of ``error``'s class as its SDK knows it: ``APIConnectionError`` for
    langchain-openai's ``OpenAIConnectionError``, a LangChain subclass of it."""
    for cls in type(error).__mro__:
        if not cls.__module__.startswith("langchain"):
            return cls.__name__
    return type(error).__name__


def _failed(endpoint: str, error: BaseException, *, sent: float, judge: str | None) -> None:
    with contextlib.suppress(AttributeError):  # an error type with __slots__: unnamed
        setattr(error, _ENDPOINT_ATTRIBUTE, endpoint)
    scope = current_scope()
    if scope is None:
        return
    # Per judge: a dead judge must not stop a healthy one that shares its endpoint.
    health = scope.endpoint_health.setdefault(judge or endpoint, EndpointHealth())
    health.failures += 1
    # Requests sent together time out together: only a wait with nothing heard from the
    # endpoint says it is silent.
    if is_timeout(error) and (health.last_reply is None or health.last_reply < sent):
        health.timeouts += 1
    limit = scope.max_consecutive_failures
    if limit is None:
        return
    if health.failures >= limit:
        what = f"{health.failures} requests in a row to {endpoint} failed"
    elif health.timeouts >= min(limit, TIMEOUTS_TO_TRIP):
        what = f"{health.timeouts} requests in a row to {endpoint} timed out with no reply"
    else:
        return
    detail = redact(_described(error))
    last = f"{error_name(error)}: {detail}" if detail else error_name(error)
    message = f"circuit breaker: {what}; last error: {last}"
    if judge is not None:
        judge_health.exclude(judge, message, abort=True)
    else:
        scope.stop(Halt(reason="circuit_breaker", message=message, abort=True))


def _answered(endpoint: str, judge: str | None) -> None:
    scope = current_scope()
    if scope is not None:
        health = scope.endpoint_health.setdefault(judge or endpoint, EndpointHealth())
        health.failures = health.timeouts = 0
        health.last_reply = time.monotonic()


class EndpointRequest(Runnable[InT, OutT]):
    """One attempt of a request to ``endpoint``: names its endpoint failure and counts it
    for the circuit breaker, per ``judge`` when it is a judge's. It adds no run to
    traces."""

    def __init__(
        self, request: Runnable[InT, OutT], endpoint: str, judge: str | None = None
    ) -> None:
        self.request = request
        self.endpoint = endpoint
        self.judge = judge
        self.name = request.name

    async def ainvoke(
        self, input: InT, config: RunnableConfig | None = None, **kwargs: Any
    ) -> OutT:
        sent = time.monotonic()
        try:
            result = await self.request.ainvoke(input, config, **kwargs)
        except Exception as error:
            if is_endpoint_failure(error):
                _failed(self.endpoint, error, sent=sent, judge=self.judge)
            else:
                _answered(self.endpoint, self.judge)
                if self.judge is not None and judge_health.is_permanent(error):
                    detail = redact(_described(error))
                    judge_health.refused(self.judge, f"{error_name(error)}: {detail}")
            raise
        _answered(self.endpoint, self.judge)
        return result

    def invoke(self, input: InT, config: RunnableConfig | None = None, **kwargs: Any) -> OutT:
        raise TypeError("a model request is sent with ainvoke (see judging.request)")
