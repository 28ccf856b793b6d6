"""What the local OpenAI-compatible server knows about one request.

:class:`RequestInfo` is what a responder or a fault policy sees; credential headers are
redacted before anything sees them, and the API key is only read for a fault that echoes it.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from langchain_answer_metrics.testing import prompt_reading

if TYPE_CHECKING:
    from langchain_answer_metrics.testing.quirks import Quirk

# The faults testing/faults.py injects (named here, where a request records its fault, so
# the two modules make no cycle).
FaultKind = Literal[
    "429", "500", "slow", "malformed_json", "wrong_shape", "truncated", "short_verdicts"
]

RequestMode = Literal["tools", "json_schema", "json_object", "text", "embeddings", "other"]

_REDACTED = "<redacted>"
_SECRET_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "api-key", "x-api-key", "openai-api-key", "cookie"}
)


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
        return prompt_reading.prompt_sections(self.messages)

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
    quirks: tuple[Quirk, ...] = ()
    """The quirks that changed the reply (realistic judge mode, :mod:`.quirks`)."""


Responder = Callable[[RequestInfo], Mapping[str, Any] | str]


def body_hash(route: str, body: Mapping[str, Any]) -> str:
    """A hash of the route and the body (what ``RequestInfo.attempt`` counts repeats of)."""
    # Canonical JSON, so key order or whitespace differences do not change the hash.
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.blake2b(f"{route}|{canonical}".encode(), digest_size=16).hexdigest()


def request_info(
    route: str,
    body: Mapping[str, Any],
    headers: Mapping[str, str],
    *,
    attempt: int,
    number: int,
    hashed: str,
) -> RequestInfo:
    """What responders and fault policies see of one request (credentials redacted)."""
    is_chat = route.endswith("/chat/completions")
    messages = body.get("messages") if is_chat else None
    return RequestInfo(
        path=route,
        body=body,
        headers=redact_headers(headers),
        model=str(body.get("model", "")),
        mode=chat_mode(body) if is_chat else "embeddings",
        schema_name=prompt_reading.schema_name_for_request(body) if is_chat else None,
        messages=messages if isinstance(messages, list) else [],
        inputs=() if is_chat else embedding_inputs(body.get("input")),
        attempt=attempt,
        number=number,
        body_hash=hashed,
    )


def chat_mode(body: Mapping[str, Any]) -> RequestMode:
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


def embedding_inputs(raw: Any) -> tuple[str, ...]:
    # Strings, or token ids (what OpenAIEmbeddings sends with check_embedding_ctx_length):
    # ids are embedded as their decimal text, which is still deterministic.
    if isinstance(raw, str):
        return (raw,)
    if isinstance(raw, list):
        if raw and all(isinstance(item, int) for item in raw):
            return (" ".join(map(str, raw)),)
        return tuple(item if isinstance(item, str) else " ".join(map(str, item)) for item in raw)
    return ()


def bearer_token(headers: Mapping[str, str]) -> str:
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
