"""Replies of the local OpenAI-compatible server: judge answers, embeddings, faults, quirks.

A chat reply is built per choice: the responder's clean payload, then the model's quirks
(:mod:`.quirks`) on the payload, then content faults on its text, then the quirks that
decide how the text goes into the message (content or tool call, fences, prose, think).
"""

from __future__ import annotations

import base64
import dataclasses
import json
import re
import time
import uuid
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

# Imported for what they register: the toy judge's rules for the steps of newer metrics.
from langchain_answer_metrics.testing import (  # noqa: F401
    heuristic_judge,
    prompt_reading,
    quirks,
    toy_judges,
    toy_pairwise,
    toy_rag,
    toy_relevance,
)
from langchain_answer_metrics.testing.faults import Fault
from langchain_answer_metrics.testing.quirks import Quirk
from langchain_answer_metrics.testing.requests import RequestInfo, Responder


def heuristic_responder(info: RequestInfo) -> Mapping[str, Any] | str:
    """The default responder: :func:`heuristic_judge.respond` for the requested schema.

    Unknown schemas get ``{}``; plain-text requests that are not judge prompts get "OK".
    """
    name = info.schema_name
    if not prompt_reading.is_known_schema(name):
        name = prompt_reading.guess_schema(info.messages)
    if name is None:
        return "OK" if info.mode == "text" else {}
    return heuristic_judge.respond(name, info.messages)


def respond_openai_tools(request_json: Mapping[str, Any]) -> dict[str, Any]:
    """The toy judge's arguments for an OpenAI chat-completions request body (tools or
    response_format); ``{}`` when the request names no schema it knows."""
    name = prompt_reading.schema_name_for_request(request_json)
    messages = request_json.get("messages") or []
    if not prompt_reading.is_known_schema(name):
        name = prompt_reading.guess_schema(messages)
    return heuristic_judge.respond(name, messages) if name else {}


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


def approx_tokens(text: str) -> int:
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


CACHE_MIN_TOKENS = 1024  # OpenAI caches a prompt prefix of at least 1,024 tokens
CACHE_STEP_TOKENS = 128  # ... in steps of 128 tokens


def cached_prefix_tokens(messages: list[dict[str, Any]]) -> int:
    """The prompt tokens a provider's prompt cache would serve, as if every prefix were
    warm: every message before the last (the static part: instructions, examples), when it
    is at least :data:`CACHE_MIN_TOKENS` long, rounded down to :data:`CACHE_STEP_TOKENS`."""
    prefix = sum(approx_tokens(prompt_reading.message_text(m)) + 4 for m in messages[:-1])
    return 0 if prefix < CACHE_MIN_TOKENS else prefix - prefix % CACHE_STEP_TOKENS


def error_body(message: str, kind: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


@dataclass
class Reply:
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)
    quirks: tuple[Quirk, ...] = ()
    """The quirks that changed the reply (for the request log)."""
    raw: bytes | None = None
    """Sent instead of ``body`` as JSON (a file's content)."""


# What a provider answers with a 4xx that no retry changes (``Fault("500", status=404)``).
_CLIENT_ERRORS = {
    400: ("Invalid request.", "invalid_request"),
    401: ("Incorrect API key provided.", "invalid_api_key"),
    403: ("You do not have access to this model.", "permission_denied"),
    404: ("The model does not exist or you do not have access to it.", "model_not_found"),
}


def fault_reply(fault: Fault | None, api_key: str = "") -> Reply | None:
    """The error reply of a transport fault ("429", "500"); None for any other fault."""
    if fault is not None and fault.kind == "429":
        return Reply(
            429,
            error_body("Rate limit reached (injected).", "requests", "rate_limit_exceeded"),
            {
                "retry-after": f"{fault.retry_after:g}",
                "retry-after-ms": str(round(fault.retry_after * 1000)),
            },
        )
    if fault is not None and fault.kind == "500" and fault.status in _CLIENT_ERRORS:
        message, code = _CLIENT_ERRORS[fault.status]
        if fault.echo_key:  # as a provider quotes the key it refused
            message = f"{message.rstrip('.')}: {api_key}."
        body = error_body(f"{message} (injected)", "invalid_request_error", code)
        return Reply(fault.status, body)
    if fault is not None and fault.kind == "500":
        message = "Internal error (injected)."
        if fault.echo_key:
            message = f"Incorrect API key provided: {api_key}. (injected)"
        return Reply(fault.status, error_body(message, "server_error"))
    return None


def render(
    payload: Mapping[str, Any] | str,
    info: RequestInfo,
    fault: Fault | None,
    wrap: Callable[[str], str] | None = None,
) -> tuple[str, str | None]:
    """The reply text for one choice and a forced finish_reason, after content faults.

    ``wrap`` (the content quirks) wraps the JSON text before a truncation cuts it.
    """
    wrap = wrap or (lambda text: text)
    kind = fault.kind if fault else None
    if kind == "short_verdicts" and isinstance(payload, Mapping):
        verdicts = payload.get("verdicts")
        if isinstance(verdicts, list):
            payload = {**payload, "verdicts": verdicts[:-1]}
    if kind == "wrong_shape":
        payload = {"result": payload}
    text = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    if kind == "malformed_json":
        return wrap(_break_json(payload, text)), None
    text = wrap(text)
    if kind == "truncated":
        # Any proper prefix of a JSON object is invalid JSON.
        return text[: max(0, len(text) // 2)], "length"
    return text, None


def echoed_input(info: RequestInfo) -> str:
    """What an echoing judge (the ``echo_input`` quirk) repeats: the prompt's judged data,
    un-escaped as the judge reads it, one section after another."""
    return "\n".join(prompt_reading.prompt_sections(info.messages).values())


def chat_reply(
    info: RequestInfo,
    fault: Fault | None,
    responder: Responder,
    quirky: tuple[Quirk, ...] = (),
) -> Reply:
    """A chat completion: one choice per ``n``, as tool calls or JSON content.

    ``quirky`` are the model's quirks (:mod:`.quirks`); ``Reply.quirks`` lists the ones that
    changed any choice.
    """
    n = max(1, int(info.body.get("n") or 1))
    choices = []
    completion_tokens = 0
    applied: set[Quirk] = set()
    as_content = quirks.replies_as_content(info.mode, quirky)
    echoed = echoed_input(info) if "echo_input" in quirky else ""
    for index in range(n):
        payload = responder(dataclasses.replace(info, choice_index=index))
        payload = quirks.transform_payload(payload, quirky, applied)
        is_json = isinstance(payload, Mapping)
        if is_json and as_content and info.mode == "tools":
            applied.add("ignore_tools")
        wrap = quirks.content_wrapper(quirky, applied, echoed) if is_json and as_content else None
        text, finish_reason = render(payload, info, fault, wrap)
        if is_json and not as_content:
            text = quirks.tool_arguments(text, quirky, applied)
        completion_tokens += approx_tokens(text)
        if not as_content:
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
        approx_tokens(prompt_reading.message_text(message)) + 4 for message in info.messages
    )
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    cached = cached_prefix_tokens(info.messages)
    if cached:
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
    return Reply(
        200,
        {
            "id": f"chatcmpl-{uuid.uuid4().hex}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": info.model,
            "choices": choices,
            "usage": usage,
            "system_fingerprint": "local-openai-server",
        },
        quirks=quirks.in_order(applied),
    )


def embeddings_reply(info: RequestInfo, default_dim: int) -> Reply:
    """Deterministic vectors for every input, as floats or base64 as the client asked."""
    dimensions = info.body.get("dimensions")
    dim = int(dimensions) if isinstance(dimensions, int) and dimensions > 0 else None
    dim = dim or default_dim
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
    tokens = sum(approx_tokens(text) for text in info.inputs)
    return Reply(
        200,
        {
            "object": "list",
            "data": data,
            "model": info.model,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        },
    )
