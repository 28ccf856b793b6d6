"""The records of the local server's Batch API: batch lines, stored files, batch jobs.

See :mod:`.batches` for the routes and what can be scripted.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any, Literal, Protocol

from langchain_answer_metrics.testing.replies import Reply, error_body

LineFault = Literal["error", "status", "expired"]
Outcome = Literal["failed", "expired"]
BATCH_ENDPOINTS = ("chat/completions", "embeddings")
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})


class LineAnswerer(Protocol):
    """What answers one batch line: the server's live logic, without live counting."""

    def answer_line(self, route: str, body: dict[str, Any], headers: Mapping[str, str]) -> Reply:
        """The reply the live endpoint at ``route`` would give ``body``."""


@dataclass(frozen=True)
class BatchLine:
    """One request line of a batch, as a line-fault policy sees it."""

    custom_id: str
    url: str
    body: Mapping[str, Any]
    model: str
    attempt: int
    """Earlier batch lines with the same url and body (since the server started)."""
    batch_id: str


@dataclass
class StoredFile:
    id: str
    purpose: str
    filename: str
    data: bytes
    created_at: int = field(default_factory=lambda: int(time.time()))
    status: str = "processed"  # Azure: "pending" until looked at again

    def describe(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "file",
            "bytes": len(self.data),
            "created_at": self.created_at,
            "filename": self.filename,
            "purpose": self.purpose,
            "status": self.status,
        }


@dataclass
class BatchJob:
    """One batch; ``status`` moves when it is looked at (see :meth:`BatchService.advance`)."""

    id: str
    endpoint: str
    input_file_id: str
    completion_window: str
    metadata: dict[str, Any] | None
    ready_at: float
    created_at: int = field(default_factory=lambda: int(time.time()))
    status: str = "validating"
    output_file_id: str | None = None
    error_file_id: str | None = None
    errors: list[dict[str, Any]] = field(default_factory=list)
    total: int = 0
    completed: int = 0
    failed: int = 0
    model: str = ""
    stamps: dict[str, int] = field(default_factory=dict)
    usage: Counter[str] = field(default_factory=Counter)

    def describe(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "batch",
            "endpoint": self.endpoint,
            "errors": {"object": "list", "data": self.errors} if self.errors else None,
            "input_file_id": self.input_file_id,
            "completion_window": self.completion_window,
            "status": self.status,
            "output_file_id": self.output_file_id,
            "error_file_id": self.error_file_id,
            "created_at": self.created_at,
            "expires_at": self.created_at + 86_400,
            **{f"{name}_at": stamp for name, stamp in self.stamps.items()},
            "request_counts": {
                "total": self.total,
                "completed": self.completed,
                "failed": self.failed,
            },
            "metadata": self.metadata,
            "model": self.model or None,
            "usage": {
                "input_tokens": self.usage["prompt_tokens"],
                "output_tokens": self.usage["completion_tokens"],
                "total_tokens": self.usage["total_tokens"],
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": 0},
            },
        }


def multipart_fields(raw: bytes, headers: Mapping[str, str]) -> dict[str, tuple[str, bytes]]:
    """The fields of a ``multipart/form-data`` body: name to (filename, bytes)."""
    content_type = next((v for k, v in headers.items() if k.lower() == "content-type"), "")
    message = BytesParser(policy=HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + raw
    )
    fields: dict[str, tuple[str, bytes]] = {}
    for part in message.iter_parts() if message.is_multipart() else []:
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        if isinstance(name, str) and isinstance(payload, bytes):
            fields[name] = (part.get_filename() or "", payload)
    return fields


def line_record(record: dict[str, Any], response: Any, error: Any) -> str:
    return json.dumps({**record, "response": response, "error": error}, ensure_ascii=False)


def not_found(kind: str, name: str) -> Reply:
    return Reply(404, error_body(f"No such {kind}: {name!r}", "invalid_request_error"))


LINE_ERRORS: dict[str | None, dict[str, str]] = {
    "expired": {
        "code": "batch_expired",
        "message": "This request could not be executed before the completion window expired.",
    },
    "error": {"code": "server_error", "message": "The line failed (injected)."},
}


def parse_input(
    data: bytes, endpoint: str, max_requests: int, deployments: Collection[str] | None = None
) -> tuple[list[dict[str, Any]], str, str]:
    """A batch input file's lines, its one model, and the problem that fails it ("": none).
    On Azure (an endpoint without ``/v1``) the model must be one of ``deployments``."""
    lines: list[dict[str, Any]] = []
    models: set[str] = set()
    seen: set[str] = set()
    for number, text in enumerate(data.decode("utf-8").splitlines(), 1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
        except ValueError:
            return [], "", f"line {number} is not JSON"
        if line.get("url") != endpoint or line.get("method") != "POST":
            return [], "", f"line {number}: url must be {endpoint} with method POST"
        custom_id = line.get("custom_id")
        if not isinstance(custom_id, str) or custom_id in seen:
            return [], "", f"line {number}: custom_id missing or not unique"
        seen.add(custom_id)
        models.add(str((line.get("body") or {}).get("model")))
        lines.append(line)
    if len(models) > 1:
        return [], "", f"one model per batch file, found {sorted(models)}"
    if len(lines) > max_requests:
        return [], "", f"{len(lines)} requests, more than the limit of {max_requests}"
    model = next(iter(models), "")
    if not endpoint.startswith("/v1/") and deployments is not None and model not in deployments:
        return [], model, f"the deployment {model!r} of the lines does not exist"
    return lines, model, ""
