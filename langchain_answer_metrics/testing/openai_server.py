"""A local OpenAI-compatible server for tests and benchmarks, with scriptable faults.

It serves ``POST /v1/chat/completions`` and ``POST /v1/embeddings`` on 127.0.0.1 (a free
port), answers judge prompts with :mod:`.heuristic_judge` (or your responder), can add a
fixed latency, and can inject faults per request. Every request is logged (credentials
redacted) for assertions. Stdlib plus numpy; no network beyond loopback::

    from langchain_openai import ChatOpenAI
    from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer, random_faults

    with LocalOpenAIServer(latency=0.05, faults=random_faults(rate=0.2, seed=0)) as server:
        llm = ChatOpenAI(base_url=server.base_url, api_key="sk-test", model="judge-a",
                         use_responses_api=False)
        ...
        assert server.chat_requests == 10

Scripting replies: pass ``responder=fn`` where ``fn(info: RequestInfo)`` returns the JSON
arguments (a dict, sent as tool-call arguments or JSON content) or a raw string (sent
verbatim). It is called once per choice (``info.choice_index``), so ``n`` votes can differ.

Scripting faults: ``faults=`` takes

- a policy ``fn(info) -> Fault | kind | None``, e.g. :func:`random_faults`,
  :func:`on_attempts` or ``lambda info: "500" if info.model == "judge-b" else None``;
- a list of ``Fault | kind | None``, consumed one per request in arrival order (then no
  faults), e.g. ``["429", None, "malformed_json"]``;
- a single ``Fault`` or kind, applied to every request.

Fault kinds (:data:`FAULT_KINDS`):

- ``"429"``: HTTP 429 with ``retry-after`` (and ``retry-after-ms``) = ``Fault.retry_after``.
- ``"500"``: HTTP ``Fault.status`` (default 500); with ``Fault(echo_key=True)`` the error
  message quotes the request's API key, as some providers do on a 401.
- ``"slow"``: stall ``Fault.delay`` seconds, then answer normally (longer than the client
  timeout, so the client gives up).
- ``"malformed_json"``: arguments / content that is not valid JSON (Python-repr quoting).
- ``"wrong_shape"``: valid JSON with the wrong fields (the reply nested under ``"result"``).
- ``"truncated"``: the JSON cut in half, ``finish_reason="length"``.
- ``"short_verdicts"``: for ClaimVerdicts requests, the last verdict dropped.

Content faults apply to chat requests only, ``short_verdicts`` only to ClaimVerdicts;
a fault that does not apply to a request is ignored (logged as no fault).

Attempts and determinism: ``RequestInfo.attempt`` counts earlier requests with the same
path and body since the last :meth:`LocalOpenAIServer.reset`. Client retries (the openai
client's own, or a ``with_retry`` wrapper) resend the same body, so ``attempt`` is the
retry number; a re-ask changes the messages and starts again at 0. :func:`random_faults`
hashes (seed, body, attempt), not arrival order, so a rerun of the same workload gets the
same faults on the same requests however requests interleave.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import hashlib
import json
import re
import socket
import threading
import time
import uuid
import zlib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal, get_args

import numpy as np
import numpy.typing as npt

from langchain_answer_metrics.testing import heuristic_judge

FaultKind = Literal[
    "429", "500", "slow", "malformed_json", "wrong_shape", "truncated", "short_verdicts"
]
FAULT_KINDS: tuple[FaultKind, ...] = get_args(FaultKind)
_TRANSPORT_FAULTS = frozenset({"429", "500", "slow"})

RequestMode = Literal["tools", "json_schema", "json_object", "text", "embeddings", "other"]

_REDACTED = "<redacted>"
_SECRET_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "api-key", "x-api-key", "openai-api-key", "cookie"}
)


@dataclass(frozen=True)
class Fault:
    """A fault to inject into one request; see the module docstring for the kinds."""

    kind: FaultKind
    retry_after: float = 0.0
    """``"429"``: seconds sent in ``retry-after`` (0 makes the client use its own backoff)."""
    delay: float = 2.0
    """``"slow"``: seconds to stall before answering."""
    status: int = 500
    """``"500"``: the HTTP status to send."""
    echo_key: bool = False
    """``"500"``: quote the request's API key (its bearer token) in the error message."""

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {self.kind!r}; expected one of {FAULT_KINDS}")


@dataclass(frozen=True)
class RequestInfo:
    """What a responder or fault policy sees about one request."""

    path: str
    body: Mapping[str, Any]
    headers: Mapping[str, str]
    """Lower-case header names; credential headers are replaced by ``"<redacted>"``."""
    model: str
    mode: RequestMode
    schema_name: str | None
    """The requested schema (tool / json_schema name, else guessed from the prompt)."""
    messages: list[dict[str, Any]]
    inputs: tuple[str, ...]
    """Embedding inputs (empty for chat)."""
    attempt: int
    """Earlier requests with the same path and body since the last reset."""
    number: int
    """Arrival order since the last reset, from 0."""
    body_hash: str
    choice_index: int = 0
    """Which of the ``n`` choices the responder is producing."""

    @cached_property
    def sections(self) -> dict[str, str]:
        """The prompt's tagged sections (``text``, ``claims``, ``source`` ...), un-escaped."""
        return heuristic_judge.prompt_sections(self.messages)

    @property
    def retry_count(self) -> int:
        """The openai client's own retry counter (``x-stainless-retry-count``), else 0."""
        try:
            return int(self.headers.get("x-stainless-retry-count", "0"))
        except ValueError:
            return 0


@dataclass(frozen=True)
class LoggedRequest:
    """One entry of the server's request log."""

    number: int
    path: str
    body: Any
    """The JSON body (None when the server was created with ``log_bodies=False``)."""
    headers: dict[str, str]
    model: str
    attempt: int
    fault: FaultKind | None
    status: int
    time: float = field(default_factory=time.time)


Responder = Callable[[RequestInfo], Mapping[str, Any] | str]
FaultLike = Fault | FaultKind
FaultPolicy = Callable[[RequestInfo], FaultLike | None]
FaultSpec = FaultPolicy | Sequence[FaultLike | None] | FaultLike | None


def heuristic_responder(info: RequestInfo) -> Mapping[str, Any] | str:
    """The default responder: :func:`heuristic_judge.respond` for the requested schema.

    Unknown schemas get ``{}``; plain-text requests that are not judge prompts get "OK".
    """
    name = info.schema_name
    if name not in heuristic_judge.SCHEMA_NAMES:
        name = heuristic_judge.guess_schema(info.messages)
    if name is None:
        return "OK" if info.mode == "text" else {}
    return heuristic_judge.respond(name, info.messages)


def as_fault(value: FaultLike | None) -> Fault | None:
    """Normalise a kind string to a :class:`Fault` with default settings."""
    if value is None or isinstance(value, Fault):
        return value
    return Fault(kind=value)


def fault_applies(fault: Fault, info: RequestInfo) -> bool:
    """Whether ``fault`` can be applied to this request (see the module docstring)."""
    if fault.kind in _TRANSPORT_FAULTS:
        return True
    if info.mode == "embeddings":
        return False
    if fault.kind == "short_verdicts":
        return info.schema_name == "ClaimVerdicts"
    return True


class FaultQueue:
    """A fault policy that hands out a list of faults one per request, then none."""

    def __init__(self, items: Sequence[FaultLike | None]) -> None:
        self._items = [as_fault(item) for item in items]
        self._next = 0
        self._lock = threading.Lock()

    def __call__(self, info: RequestInfo) -> Fault | None:
        with self._lock:
            if self._next >= len(self._items):
                return None
            self._next += 1
            return self._items[self._next - 1]

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._items) - self._next


def on_attempts(fault: FaultLike, attempts: Sequence[int] = (0,)) -> FaultPolicy:
    """A policy applying ``fault`` to the given attempt numbers only.

    ``on_attempts("429")`` rate-limits every first attempt, so one client retry succeeds.
    """
    chosen = as_fault(fault)
    wanted = frozenset(attempts)
    return lambda info: chosen if info.attempt in wanted else None


def random_faults(
    rate: float = 0.2,
    kinds: Sequence[FaultKind] = FAULT_KINDS,
    seed: int = 0,
    *,
    retry_after: float = 0.0,
    delay: float = 2.0,
    max_attempt: int | None = None,
) -> FaultPolicy:
    """A seeded policy faulting about ``rate`` of requests with a kind from ``kinds``.

    Deterministic per (seed, request body, attempt), see the module docstring. Only kinds
    that apply to a request are drawn from, so ``short_verdicts`` hits ClaimVerdicts
    requests only. With ``max_attempt=k``, attempts after ``k`` are never faulted, which
    guarantees a client with more than ``k`` retries eventually succeeds.
    """
    if not 0.0 <= rate <= 1.0:
        raise ValueError("rate must be between 0 and 1")
    faults = [Fault(kind=kind, retry_after=retry_after, delay=delay) for kind in kinds]

    def policy(info: RequestInfo) -> Fault | None:
        if max_attempt is not None and info.attempt > max_attempt:
            return None
        digest = hashlib.blake2b(
            f"{seed}|{info.body_hash}|{info.attempt}".encode(), digest_size=16
        ).digest()
        if int.from_bytes(digest[:8], "big") / 2.0**64 >= rate:
            return None
        candidates = [fault for fault in faults if fault_applies(fault, info)]
        if not candidates:
            return None
        return candidates[int.from_bytes(digest[8:], "big") % len(candidates)]

    return policy


def _as_policy(spec: FaultSpec) -> FaultPolicy | None:
    if spec is None:
        return None
    if isinstance(spec, (Fault, str)):
        always = as_fault(spec)
        return lambda info: always
    if callable(spec):
        return spec
    return FaultQueue(spec)


# --------------------------------------------------------------------------- embeddings

_EMBED_TOKEN_RE = re.compile(r"\w+")
_CJK_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]")


@lru_cache(maxsize=8192)
def embed_text(text: str, dim: int = 256) -> npt.NDArray[np.float32]:
    """A deterministic unit vector: hashed words and character trigrams of ``text``.

    Texts sharing words or word pieces get similar vectors, which is all tests need. The
    hash is crc32 (not ``hash()``, which is salted per process) so vectors are stable
    across runs. The returned array is read-only (it is cached).
    """
    features: list[str] = []
    for word in _EMBED_TOKEN_RE.findall(text.lower()):
        features.append(word)
        if _CJK_RE.search(word):
            # No spaces in CJK: characters and bigrams carry the lexical signal.
            features.extend(word)
            features.extend(word[i : i + 2] for i in range(len(word) - 1))
        else:
            padded = f" {word} "
            features.extend(padded[i : i + 3] for i in range(len(padded) - 2))
    vector = np.zeros(dim, dtype=np.float64)
    if not features:
        vector[0] = 1.0  # a unit vector, so cosine similarity stays defined
    else:
        hashes = np.array([zlib.crc32(f.encode()) for f in features], dtype=np.uint64)
        signs = np.where(hashes & np.uint64(1 << 31), -1.0, 1.0)
        np.add.at(vector, (hashes % np.uint64(dim)).astype(np.intp), signs)
        norm = float(np.linalg.norm(vector))
        if norm == 0.0:
            vector[0] = 1.0
        else:
            vector /= norm
    result = vector.astype(np.float32)
    result.setflags(write=False)
    return result


# --------------------------------------------------------------------------- replies


def _approx_tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _break_json(payload: Mapping[str, Any] | str, text: str) -> str:
    """Text that looks like the reply but is not valid JSON."""
    candidate = repr(dict(payload)) if isinstance(payload, Mapping) else text
    try:
        json.loads(candidate)
    except ValueError:
        return candidate
    # repr() can be valid JSON (e.g. values with apostrophes): a trailing comma never is.
    stripped = candidate.rstrip()
    return stripped[:-1] + ",}" if stripped.endswith("}") else "{" + stripped


def _error_body(message: str, kind: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


@dataclass
class _Reply:
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


class LocalOpenAIServer:
    """An OpenAI-compatible HTTP server on 127.0.0.1 for tests and benchmarks.

    Use as a context manager, or call :meth:`start` / :meth:`stop`. ``responder``,
    ``faults`` and ``latency`` may be reassigned while the server runs. See the module
    docstring for responders, fault kinds and attempts.
    """

    def __init__(
        self,
        *,
        responder: Responder | None = None,
        faults: FaultSpec = None,
        latency: float = 0.0,
        embedding_dim: int = 256,
        log_bodies: bool = True,
        port: int = 0,
    ) -> None:
        self.responder: Responder = responder or heuristic_responder
        self.latency = latency
        self.embedding_dim = embedding_dim
        self.log_bodies = log_bodies
        self._faults = _as_policy(faults)
        self._requested_port = port
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._connections: set[socket.socket] = set()
        self._log: list[LoggedRequest] = []
        self._attempts: dict[str, int] = {}
        self._number = 0
        self.chat_requests = 0
        self.embedding_requests = 0
        self.model_counts: Counter[str] = Counter()
        self.fault_counts: Counter[str] = Counter()

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> LocalOpenAIServer:
        """Bind a free loopback port and serve in a daemon thread. Returns self."""
        if self._httpd is not None:
            return self
        self._stopping.clear()
        httpd = _HTTPServer(("127.0.0.1", self._requested_port), _Handler)
        httpd.owner = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True,
            name=f"LocalOpenAIServer:{self.port}",
        )  # fmt: skip
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, close open connections and wake stalled ("slow") handlers."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            # Keep-alive connections would otherwise keep their handler threads serving.
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> LocalOpenAIServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the server is not running; call start()")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (no ``/v1``)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``, for ``ChatOpenAI(base_url=...)``."""
        return f"{self.url}/v1"

    # ------------------------------------------------------------------ log

    @property
    def faults(self) -> FaultPolicy | None:
        return self._faults

    @faults.setter
    def faults(self, spec: FaultSpec) -> None:
        self._faults = _as_policy(spec)

    @property
    def requests(self) -> list[LoggedRequest]:
        """A copy of the request log, in arrival order."""
        with self._lock:
            return list(self._log)

    def reset(self) -> None:
        """Clear the log, counters and attempt numbers (not the responder or faults)."""
        with self._lock:
            self._log.clear()
            self._attempts.clear()
            self._number = 0
            self.chat_requests = 0
            self.embedding_requests = 0
            self.model_counts.clear()
            self.fault_counts.clear()

    # ------------------------------------------------------------------ handling

    def _register(self, connection: socket.socket, add: bool) -> None:
        with self._lock:
            if add:
                self._connections.add(connection)
            else:
                self._connections.discard(connection)

    def _sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)

    def handle(self, path: str, raw_body: bytes, headers: Mapping[str, str]) -> _Reply:
        """Answer one request (called from the HTTP handler threads)."""
        route = path.split("?", 1)[0].rstrip("/")
        if route.endswith("/models"):
            return _Reply(200, {"object": "list", "data": []})
        if not (route.endswith("/chat/completions") or route.endswith("/embeddings")):
            return _Reply(404, _error_body(f"no route {path}", "invalid_request_error"))
        try:
            body = json.loads(raw_body or b"{}")
            if not isinstance(body, dict):
                raise ValueError("the body is not a JSON object")
        except ValueError as error:
            return _Reply(400, _error_body(f"invalid JSON body: {error}", "invalid_request_error"))

        info = self._request_info(route, body, raw_body, headers)
        fault = None
        if self._faults is not None:
            fault = as_fault(self._faults(info))
            if fault is not None and not fault_applies(fault, info):
                fault = None

        try:
            reply = self._reply(info, fault, _bearer_token(headers))
        except Exception as error:
            # A responder bug is not transient: tell the openai client not to retry it.
            reply = _Reply(
                500,
                _error_body(f"responder failed: {error!r}", "server_error"),
                {"x-should-retry": "false"},
            )
        self._record(info, body, fault, reply.status)
        self._sleep(self.latency)
        if fault is not None and fault.kind == "slow":
            self._sleep(fault.delay)
        return reply

    def _request_info(
        self, route: str, body: dict[str, Any], raw_body: bytes, headers: Mapping[str, str]
    ) -> RequestInfo:
        is_chat = route.endswith("/chat/completions")
        # Canonical JSON, so key order or whitespace differences do not change the hash.
        canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        body_hash = hashlib.blake2b(f"{route}|{canonical}".encode(), digest_size=16).hexdigest()
        with self._lock:
            attempt = self._attempts.get(body_hash, 0)
            self._attempts[body_hash] = attempt + 1
            number = self._number
            self._number += 1
        messages = body.get("messages") if is_chat else None
        messages = messages if isinstance(messages, list) else []
        return RequestInfo(
            path=route,
            body=body,
            headers=redact_headers(headers),
            model=str(body.get("model", "")),
            mode=_chat_mode(body) if is_chat else "embeddings",
            schema_name=heuristic_judge.schema_name_for_request(body) if is_chat else None,
            messages=messages,
            inputs=() if is_chat else _embedding_inputs(body.get("input")),
            attempt=attempt,
            number=number,
            body_hash=body_hash,
        )

    def _record(
        self, info: RequestInfo, body: dict[str, Any], fault: Fault | None, status: int
    ) -> None:
        entry = LoggedRequest(
            number=info.number,
            path=info.path,
            body=body if self.log_bodies else None,
            headers=dict(info.headers),
            model=info.model,
            attempt=info.attempt,
            fault=fault.kind if fault else None,
            status=status,
        )
        with self._lock:
            self._log.append(entry)
            if info.mode == "embeddings":
                self.embedding_requests += 1
            else:
                self.chat_requests += 1
            self.model_counts[info.model] += 1
            if fault is not None:
                self.fault_counts[fault.kind] += 1

    def _reply(self, info: RequestInfo, fault: Fault | None, api_key: str = "") -> _Reply:
        if fault is not None and fault.kind == "429":
            return _Reply(
                429,
                _error_body("Rate limit reached (injected).", "requests", "rate_limit_exceeded"),
                {
                    "retry-after": f"{fault.retry_after:g}",
                    "retry-after-ms": str(round(fault.retry_after * 1000)),
                },
            )
        if fault is not None and fault.kind == "500":
            message = "Internal error (injected)."
            if fault.echo_key:
                message = f"Incorrect API key provided: {api_key}. (injected)"
            return _Reply(fault.status, _error_body(message, "server_error"))
        if info.mode == "embeddings":
            return self._embeddings(info)
        return self._chat(info, fault)

    def _chat(self, info: RequestInfo, fault: Fault | None) -> _Reply:
        n = max(1, int(info.body.get("n") or 1))
        choices = []
        completion_tokens = 0
        for index in range(n):
            payload = self.responder(dataclasses.replace(info, choice_index=index))
            text, finish_reason = _render(payload, info, fault)
            completion_tokens += _approx_tokens(text)
            if info.mode == "tools":
                message: dict[str, Any] = {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": f"call_{uuid.uuid4().hex[:24]}",
                            "type": "function",
                            "function": {"name": info.schema_name or "", "arguments": text},
                        }
                    ],
                }
                finish_reason = finish_reason or "tool_calls"
            else:
                message = {"role": "assistant", "content": text, "refusal": None}
            choices.append(
                {
                    "index": index,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": finish_reason or "stop",
                }
            )
        prompt_tokens = sum(
            _approx_tokens(heuristic_judge.message_text(message)) + 4 for message in info.messages
        )
        return _Reply(
            200,
            {
                "id": f"chatcmpl-{uuid.uuid4().hex}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": info.model,
                "choices": choices,
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
                "system_fingerprint": "local-openai-server",
            },
        )

    def _embeddings(self, info: RequestInfo) -> _Reply:
        dimensions = info.body.get("dimensions")
        dim = int(dimensions) if isinstance(dimensions, int) and dimensions > 0 else None
        dim = dim or self.embedding_dim
        as_base64 = info.body.get("encoding_format") == "base64"
        data = []
        for index, text in enumerate(info.inputs):
            vector = embed_text(text, dim)
            embedding: Any = (
                base64.b64encode(vector.astype("<f4").tobytes()).decode("ascii")
                if as_base64
                else vector.tolist()
            )
            data.append({"object": "embedding", "index": index, "embedding": embedding})
        tokens = sum(_approx_tokens(text) for text in info.inputs)
        return _Reply(
            200,
            {
                "object": "list",
                "data": data,
                "model": info.model,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )


def _render(
    payload: Mapping[str, Any] | str, info: RequestInfo, fault: Fault | None
) -> tuple[str, str | None]:
    """The reply text for one choice and a forced finish_reason, after content faults."""
    kind = fault.kind if fault else None
    if kind == "short_verdicts" and isinstance(payload, Mapping):
        verdicts = payload.get("verdicts")
        if isinstance(verdicts, list):
            payload = {**payload, "verdicts": verdicts[:-1]}
    if kind == "wrong_shape":
        payload = {"result": payload}
    text = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    if kind == "malformed_json":
        return _break_json(payload, text), None
    if kind == "truncated":
        # Any proper prefix of a JSON object is invalid JSON.
        return text[: max(0, len(text) // 2)], "length"
    return text, None


def _chat_mode(body: Mapping[str, Any]) -> RequestMode:
    if body.get("tools"):
        return "tools"
    response_format = body.get("response_format")
    if isinstance(response_format, Mapping):
        kind = response_format.get("type")
        if kind == "json_schema":
            return "json_schema"
        if kind == "json_object":
            return "json_object"
    return "text"


def _embedding_inputs(raw: Any) -> tuple[str, ...]:
    # Strings, or token ids (what OpenAIEmbeddings sends with check_embedding_ctx_length):
    # ids are embedded as their decimal text, which is still deterministic.
    if isinstance(raw, str):
        return (raw,)
    if isinstance(raw, list):
        if raw and all(isinstance(item, int) for item in raw):
            return (" ".join(map(str, raw)),)
        return tuple(item if isinstance(item, str) else " ".join(map(str, item)) for item in raw)
    return ()


def _bearer_token(headers: Mapping[str, str]) -> str:
    """The API key a request was sent with (never logged; only a fault may echo it)."""
    for name, value in headers.items():
        if name.lower() == "authorization":
            return value.removeprefix("Bearer ").strip()
    return ""


def redact_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Lower-cased headers with credential values replaced by ``"<redacted>"``."""
    return {
        name.lower(): (_REDACTED if name.lower() in _SECRET_HEADERS else value)
        for name, value in headers.items()
    }


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True  # a stalled ("slow") handler must not block shutdown
    request_queue_size = 256  # bursts of concurrent connects must not overflow the backlog
    owner: LocalOpenAIServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients that time out or hang up are expected (the "slow" fault); stay quiet.
        return


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: clients reuse connections under load
    timeout = 60  # idle keep-alive connections release their thread eventually
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in separate writes; without NODELAY, Nagle's algorithm
        # plus the client's delayed ACK adds ~40 ms to every keep-alive reply.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.owner._register(self.connection, add=True)

    def finish(self) -> None:
        self.server.owner._register(self.connection, add=False)
        with contextlib.suppress(OSError):
            super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        return  # no per-request stderr noise (and never any headers)

    def do_GET(self) -> None:
        self._serve(b"")

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        self._serve(self.rfile.read(length) if length else b"")

    def _serve(self, raw_body: bytes) -> None:
        reply = self.server.owner.handle(self.path, raw_body, dict(self.headers.items()))
        payload = json.dumps(reply.body, ensure_ascii=False).encode("utf-8")
        try:
            self.send_response(reply.status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
        except OSError:
            # The client gave up (timeout) or the server is stopping.
            self.close_connection = True


def main(argv: Sequence[str] | None = None) -> None:
    """Run the server in the foreground (e.g. in its own process for benchmarks).

    ``python -m langchain_answer_metrics.testing.openai_server --latency 0.2 --fault-rate 0.1``
    """
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per request")
    parser.add_argument("--embedding-dim", type=int, default=256)
    parser.add_argument("--fault-rate", type=float, default=0.0)
    parser.add_argument("--fault-kinds", default=",".join(FAULT_KINDS), help="comma-separated")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--retry-after", type=float, default=0.0)
    parser.add_argument("--slow-delay", type=float, default=2.0)
    args = parser.parse_args(argv)
    kinds = [kind.strip() for kind in args.fault_kinds.split(",") if kind.strip()]
    for kind in kinds:
        Fault(kind=kind)  # validates the name
    faults = (
        random_faults(
            args.fault_rate,
            kinds,
            args.seed,
            retry_after=args.retry_after,
            delay=args.slow_delay,
        )
        if args.fault_rate > 0
        else None
    )
    server = LocalOpenAIServer(
        faults=faults,
        latency=args.latency,
        embedding_dim=args.embedding_dim,
        log_bodies=False,  # a long-running server must not grow without bound
        port=args.port,
    )
    with server:
        print(server.base_url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()
