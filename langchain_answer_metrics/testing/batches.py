"""The Files and Batches API of the local OpenAI-compatible server.

:class:`BatchService` serves what OpenAI's Batch API serves, on the same routes:

- ``POST /v1/files`` (multipart, ``purpose=batch``), ``GET /v1/files``,
  ``GET /v1/files/{id}``, ``GET /v1/files/{id}/content``, ``DELETE /v1/files/{id}``;
- ``POST /v1/batches`` (``endpoint`` ``/v1/chat/completions`` or ``/v1/embeddings``),
  ``GET /v1/batches/{id}``, ``POST /v1/batches/{id}/cancel``, ``GET /v1/batches``.

Each line of a batch is answered by the server's own judge logic (the responder, quirks
and embeddings of the live endpoints), so a batch run and a live run get the same
replies. Lines are counted apart from live requests (``server.batch.lines``,
``server.batch.usage``), and never in ``server.chat_requests``.

A batch goes ``validating`` → ``in_progress`` → ``completed`` when first looked at after
``delay`` seconds (``hold()`` keeps every batch in progress until ``release()``), and is
answered then, all lines at once. What can go wrong is scripted::

    server.batch.delay = 0.2
    server.batch.line_faults = lambda line: "error" if line.attempt == 0 else None
    server.batch.outcome = lambda job: "failed"       # or "expired", or None
    server.batch.enabled = False                      # 404 on /files and /batches
    server.batch.endpoints = ("chat/completions",)    # no embeddings batches (400)

On Azure's routes (:mod:`.azure`) a file is ``pending`` until looked at again, and the
endpoints have no ``/v1``; every line's ``model`` is a deployment.

Line faults: ``"error"`` (an ``error`` object, no response), ``"status"`` (a non-200
``response`` and ``error: null``), ``"expired"`` (not run: the batch ends ``expired``,
the line in the error file with code ``batch_expired``). ``line.attempt`` counts earlier
batch lines with the same body. Outcomes: ``"failed"`` (validation failed: no line is
run, ``errors`` gives the reason), ``"expired"`` (no line is run in the window).
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from langchain_answer_metrics.testing.batch_jobs import (
    BATCH_ENDPOINTS,
    LINE_ERRORS,
    TERMINAL,
    BatchJob,
    BatchLine,
    LineAnswerer,
    LineFault,
    Outcome,
    StoredFile,
    line_record,
    multipart_fields,
    not_found,
    parse_input,
)
from langchain_answer_metrics.testing.replies import Reply, error_body

__all__ = ["BatchJob", "BatchLine", "BatchService", "LineFault", "Outcome", "StoredFile"]


class BatchService:
    """Files and batches of one local server (see the module docstring).

    Attributes:
        enabled: False answers 404 on every Files and Batches route.
        endpoints: what a batch may be for (``chat/completions``, ``embeddings``); a
            batch for another is refused with a 400, as a provider without it does.
        delay: seconds from a batch's creation to its completion.
        line_faults: ``fn(BatchLine) -> "error" | "status" | "expired" | None``.
        outcome: ``fn(BatchJob) -> "failed" | "expired" | None``, decided when it would run.
        max_requests: lines per batch at most (OpenAI documents 50,000).
        lines: batch lines answered; ``usage``: their tokens per model
            (``prompt_tokens``, ``completion_tokens``, ``total_tokens``, ``requests``).
    """

    def __init__(self, answerer: LineAnswerer) -> None:
        self.answerer = answerer
        self.enabled = True
        self.endpoints: tuple[str, ...] = BATCH_ENDPOINTS
        self.delay = 0.0
        self.line_faults: Callable[[BatchLine], LineFault | None] | None = None
        self.outcome: Callable[[BatchJob], Outcome | None] | None = None
        self.max_requests = 50_000
        self.files: dict[str, StoredFile] = {}
        self.jobs: dict[str, BatchJob] = {}
        self.lines = 0
        self.usage: dict[str, Counter[str]] = {}
        self.created: list[str] = []  # batch ids in creation order
        self.deleted_files: list[str] = []
        self._attempts: Counter[str] = Counter()
        self._held = False
        self._lock = threading.RLock()

    # ------------------------------------------------------------------ control

    def hold(self) -> None:
        """Keep every batch in progress (however long its delay) until :meth:`release`."""
        self._held = True

    def release(self) -> None:
        """Let held batches complete when next looked at."""
        self._held = False
        with self._lock:
            for job in self.jobs.values():
                job.ready_at = min(job.ready_at, time.monotonic())

    def reset(self) -> None:
        """Forget files, batches and counts (the settings stay)."""
        with self._lock:
            self.files.clear()
            self.jobs.clear()
            self.created.clear()
            self.deleted_files.clear()
            self.usage.clear()
            self._attempts.clear()
            self.lines = 0

    # ------------------------------------------------------------------ routing

    def route(
        self,
        method: str,
        route: str,
        raw: bytes,
        headers: Mapping[str, str],
        *,
        azure: bool = False,
    ) -> Reply | None:
        """The reply for a Files or Batches request; None for any other route. ``azure``:
        the request came on Azure's routes (``route`` without its ``/openai`` prefix)."""
        parts = route.split("/")
        try:
            start = parts.index("v1") + 1
        except ValueError:
            start = 1
        parts = [part for part in parts[start:] if part]
        if not parts or parts[0] not in ("files", "batches"):
            return None
        if not self.enabled:
            return Reply(404, error_body(f"no route {route}", "invalid_request_error"))
        with self._lock:
            if parts[0] == "files":
                return self._files(method, parts[1:], raw, headers, azure)
            return self._batches(method, parts[1:], raw, headers, azure)

    def _files(
        self, method: str, rest: list[str], raw: bytes, headers: Mapping[str, str], azure: bool
    ) -> Reply:
        if not rest and method == "POST":  # on Azure: processed once looked at again
            return self._upload(raw, headers, "pending" if azure else "processed")
        if not rest and method == "GET":
            listed = [stored.describe() for stored in self.files.values()]
            return Reply(200, {"object": "list", "data": listed, "has_more": False})
        stored = self.files.get(rest[0]) if rest else None
        if stored is None:
            return not_found("file", rest[0] if rest else "")
        if len(rest) == 1 and method == "GET":
            described = stored.describe()
            stored.status = "processed"
            return Reply(200, described)
        if len(rest) == 1 and method == "DELETE":
            del self.files[stored.id]
            self.deleted_files.append(stored.id)
            return Reply(200, {"id": stored.id, "object": "file", "deleted": True})
        if rest[1:] == ["content"] and method == "GET":
            return Reply(200, {}, {"content-type": "application/jsonl"}, raw=stored.data)
        return not_found("route", "/".join(rest))

    def _upload(self, raw: bytes, headers: Mapping[str, str], status: str = "processed") -> Reply:
        fields = multipart_fields(raw, headers)
        if "file" not in fields:
            return Reply(
                400, error_body("a multipart 'file' field is required", "invalid_request_error")
            )
        purpose = fields.get("purpose", ("", b""))[1].decode()
        if purpose != "batch":
            return Reply(
                400, error_body(f"unsupported purpose {purpose!r}", "invalid_request_error")
            )
        filename, data = fields["file"]
        stored = StoredFile(f"file-{uuid.uuid4().hex[:24]}", purpose, filename, data, status=status)
        self.files[stored.id] = stored
        return Reply(200, stored.describe())

    def _batches(
        self, method: str, rest: list[str], raw: bytes, headers: Mapping[str, str], azure: bool
    ) -> Reply:
        if not rest and method == "POST":
            return self._create(raw, azure)
        if not rest and method == "GET":
            jobs = [self.advance(job, headers).describe() for job in self.jobs.values()]
            jobs.reverse()  # newest first, as OpenAI lists them
            return Reply(200, {"object": "list", "data": jobs, "has_more": False})
        job = self.jobs.get(rest[0]) if rest else None
        if job is None:
            return not_found("batch", rest[0] if rest else "")
        if len(rest) == 1 and method == "GET":
            return Reply(200, self.advance(job, headers).describe())
        if rest[1:] == ["cancel"] and method == "POST":
            self.advance(job, headers)
            if job.status not in TERMINAL:
                self._stamp(job, "cancelling")
                job.status = "cancelled"
                self._stamp(job, "cancelled")
            return Reply(200, job.describe())
        return not_found("route", "/".join(rest))

    def _create(self, raw: bytes, azure: bool) -> Reply:
        try:
            body = json.loads(raw or b"{}")
        except ValueError as error:
            return Reply(400, error_body(f"invalid JSON body: {error}", "invalid_request_error"))
        endpoint = body.get("endpoint")
        if endpoint not in [("/" if azure else "/v1/") + kind for kind in self.endpoints]:
            return Reply(
                400, error_body(f"unsupported endpoint {endpoint!r}", "invalid_request_error")
            )
        stored = self.files.get(body.get("input_file_id"))
        if stored is None:
            return not_found("file", str(body.get("input_file_id")))
        if stored.status != "processed":
            message = f"The input file {stored.id} is {stored.status}, not processed yet."
            return Reply(400, error_body(message, "invalid_request_error"))
        job = BatchJob(
            id=f"batch_{uuid.uuid4().hex[:24]}",
            endpoint=endpoint,
            input_file_id=body["input_file_id"],
            completion_window=str(body.get("completion_window") or "24h"),
            metadata=body.get("metadata"),
            ready_at=time.monotonic() + self.delay,
        )
        self.jobs[job.id] = job
        self.created.append(job.id)
        return Reply(200, job.describe())

    # ------------------------------------------------------------------ running

    def advance(self, job: BatchJob, headers: Mapping[str, str]) -> BatchJob:
        """Move ``job`` on as far as time allows; answer its lines once it is due."""
        if job.status == "validating":
            lines, problem = self._parse(job)
            if problem:
                return self._fail(job, "invalid_request", problem)
            job.total = len(lines)
            job.status = "in_progress"
            self._stamp(job, "in_progress")
        if job.status != "in_progress" or self._held or time.monotonic() < job.ready_at:
            return job
        lines, _ = self._parse(job)
        outcome = self.outcome(job) if self.outcome is not None else None
        if outcome == "failed":
            return self._fail(job, "batch_failed", "The batch failed (injected).")
        self._run(job, lines, headers, expire_all=outcome == "expired")
        return job

    def _parse(self, job: BatchJob) -> tuple[list[dict[str, Any]], str]:
        stored = self.files.get(job.input_file_id)
        if stored is None:
            return [], "the input file was deleted"
        deployments = getattr(self.answerer, "deployments", None)
        lines, model, problem = parse_input(
            stored.data, job.endpoint, self.max_requests, deployments
        )
        job.model = model
        return lines, problem

    def _run(
        self,
        job: BatchJob,
        lines: list[dict[str, Any]],
        headers: Mapping[str, str],
        *,
        expire_all: bool,
    ) -> None:
        outputs: list[str] = []
        errors: list[str] = []
        expired = expire_all
        for line in lines:
            body = line.get("body") or {}
            key = json.dumps([line["url"], body], sort_keys=True)
            attempt = self._attempts[key]
            self._attempts[key] += 1
            seen = BatchLine(
                line["custom_id"], line["url"], body, str(body.get("model")), attempt, job.id
            )
            fault = (
                "expired" if expire_all else (self.line_faults(seen) if self.line_faults else None)
            )
            record = {"id": f"batch_req_{uuid.uuid4().hex[:24]}", "custom_id": seen.custom_id}
            if fault in LINE_ERRORS:
                expired = expired or fault == "expired"
                errors.append(line_record(record, None, LINE_ERRORS[fault]))
                job.failed += 1
                continue
            reply = self.answerer.answer_line(line["url"], dict(body), headers)
            status = 500 if fault == "status" else reply.status
            reply_body = (
                error_body("Internal error (injected).", "server_error")
                if fault == "status"
                else reply.body
            )
            response = {"status_code": status, "request_id": uuid.uuid4().hex, "body": reply_body}
            self.lines += 1
            if status == 200:
                self._count(job, seen.model, reply_body.get("usage") or {})
                outputs.append(line_record(record, response, None))
                job.completed += 1
            else:
                errors.append(line_record(record, response, None))
                job.failed += 1
        job.status = "finalizing"
        self._stamp(job, "finalizing")
        if outputs:
            job.output_file_id = self._store(job, "output", outputs)
        if errors:
            job.error_file_id = self._store(job, "error", errors)
        job.status = "expired" if expired else "completed"
        self._stamp(job, job.status)

    def _count(self, job: BatchJob, model: str, usage: Mapping[str, Any]) -> None:
        tally = self.usage.setdefault(model, Counter())
        for name in ("prompt_tokens", "completion_tokens", "total_tokens"):
            value = int(usage.get(name) or 0)
            tally[name] += value
            job.usage[name] += value
        tally["requests"] += 1

    def _store(self, job: BatchJob, kind: str, lines: list[str]) -> str:
        stored = StoredFile(
            f"file-{uuid.uuid4().hex[:24]}",
            f"batch_{kind}",
            f"{job.id}_{kind}.jsonl",
            ("\n".join(lines) + "\n").encode("utf-8"),
        )
        self.files[stored.id] = stored
        return stored.id

    def _fail(self, job: BatchJob, code: str, message: str) -> BatchJob:
        job.errors = [{"code": code, "message": message, "param": None, "line": None}]
        job.status = "failed"
        self._stamp(job, "failed")
        return job

    @staticmethod
    def _stamp(job: BatchJob, name: str) -> None:
        job.stamps[name] = int(time.time())
