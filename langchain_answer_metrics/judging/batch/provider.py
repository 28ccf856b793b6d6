"""One endpoint's Files and Batches API, through the judge's own openai client.

The client is the real model's (``root_client``, with its base URL, key, organization and
headers, Azure's included), with longer timeouts for files; its blocking calls run in a
worker thread, so no async client is bound to the package's event loop (see
:mod:`~..sync`). Whether an endpoint has the API is found out by asking it
(:meth:`BatchProvider.probe`), never from a list of providers.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from dataclasses import dataclass
from typing import Any

from langchain_answer_metrics.core.redaction import redact
from langchain_answer_metrics.judging.batch.lines import BatchRefusedError

__all__ = ["BatchProvider", "BatchUnavailableError", "LineOutcome", "ProviderBatch"]

# Files can be large: more time than a chat request, and the client's own retries.
_FILE_TIMEOUT_SECONDS = 600.0
_CLIENT_RETRIES = 3
# A file's status while the provider processes it (Azure OpenAI); OpenAI's is final.
_FILE_PENDING = ("pending", "running")


class BatchUnavailableError(RuntimeError):
    """The judge cannot run in batch mode (refused before any judge request)."""


@dataclass(frozen=True)
class ProviderBatch:
    """What a poll says of a batch."""

    id: str
    status: str
    completed: int
    failed: int
    total: int
    output_file_id: str | None
    error_file_id: str | None
    reason: str  # the provider's errors, joined ("" if none)

    @property
    def ended(self) -> bool:
        return self.status in ("completed", "failed", "expired", "cancelled")

    @classmethod
    def of(cls, batch: Any) -> ProviderBatch:
        counts = getattr(batch, "request_counts", None)
        errors = getattr(getattr(batch, "errors", None), "data", None) or []
        reason = "; ".join(
            f"{getattr(e, 'code', '') or 'error'}: {getattr(e, 'message', '') or ''}"
            for e in errors
        )
        return cls(
            id=batch.id,
            status=batch.status,
            completed=getattr(counts, "completed", 0) or 0,
            failed=getattr(counts, "failed", 0) or 0,
            total=getattr(counts, "total", 0) or 0,
            output_file_id=batch.output_file_id,
            error_file_id=batch.error_file_id,
            reason=reason,
        )


@dataclass(frozen=True)
class LineOutcome:
    """One line of an output or error file: the response body, or why it failed."""

    reply: dict[str, Any] | None
    problem: str = ""


def read_outcome(record: dict[str, Any]) -> LineOutcome:
    """A line of the output or error file. A provider writes a failed line either with an
    ``error`` object, or with a non-200 ``response`` and ``error: null``: both are failures."""
    error = record.get("error")
    response = record.get("response") or {}
    status = response.get("status_code")
    body = response.get("body")
    if error:
        code = error.get("code") or "error"
        return LineOutcome(None, f"{code}: {error.get('message') or ''}".strip())
    if status != 200 or not isinstance(body, dict):
        detail = body.get("error", {}) if isinstance(body, dict) else {}
        message = detail.get("message") if isinstance(detail, dict) else None
        return LineOutcome(None, f"status {status}: {message or 'no response body'}")
    return LineOutcome(body)


class BatchProvider:
    """The Files and Batches API at one endpoint, through a model's own openai client
    (a chat model's ``root_client``, an embeddings model's ``client._client``)."""

    def __init__(self, client: Any, label: str) -> None:
        import openai

        self.label = label
        # Azure OpenAI (api-version routes): a line's url and a batch's endpoint have no
        # /v1, and a line names its deployment as its model.
        self.azure = isinstance(client, (openai.AzureOpenAI, openai.AsyncAzureOpenAI))
        options: dict[str, Any] = {}
        if type(client._client).__module__.startswith("langchain_answer_metrics"):
            # The package's limited HTTP client (config/http_limits.py) caps a reply at a
            # chat reply's size; an output file is far larger: the SDK's default client.
            options["http_client"] = openai.DefaultHttpxClient()
        self.client = client.with_options(
            timeout=_FILE_TIMEOUT_SECONDS, max_retries=_CLIENT_RETRIES, **options
        )

    def endpoint(self, kind: str) -> str:
        """The batch endpoint (and each line's url) for ``kind``: ``chat/completions`` or
        ``embeddings``."""
        return f"/{kind}" if self.azure else f"/v1/{kind}"

    async def _call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        return await asyncio.to_thread(fn, *args, **kwargs)

    async def probe(self) -> None:
        """Ask the endpoint whether it has the Batch API (a 404 means no).

        Raises:
            BatchUnavailableError: naming the judge and suggesting the live mode.
        """
        import openai

        try:
            await self._call(self.client.batches.list, limit=1)
        except openai.NotFoundError:
            raise BatchUnavailableError(
                f"judge {self.label}: its endpoint ({self.client.base_url}) answers 404 on "
                "the Batches API; run it live (without --batch / batch=True)"
            ) from None

    async def upload(self, data: bytes, name: str) -> str:
        """Upload a batch input file; returns its id once the provider has processed it
        (Azure OpenAI answers ``pending`` first and refuses a batch on it until then).

        Raises:
            RuntimeError: the provider could not process the file, or took longer than
                ``_FILE_TIMEOUT_SECONDS``.
        """
        created = await self._call(
            self.client.files.create, file=(name, io.BytesIO(data)), purpose="batch"
        )
        waited, pause = 0.0, 0.05
        while getattr(created, "status", None) in _FILE_PENDING:
            if waited > _FILE_TIMEOUT_SECONDS:
                raise RuntimeError(f"file {created.id} still {created.status} after {waited:g} s")
            await asyncio.sleep(pause)
            waited, pause = waited + pause, min(pause * 2, 5.0)
            created = await self._call(self.client.files.retrieve, created.id)
        if getattr(created, "status", None) in ("error", "failed"):
            detail = getattr(created, "status_details", None) or "no reason given"
            raise RuntimeError(f"file {created.id} was not processed: {detail}")
        return str(created.id)

    async def create(self, file_id: str, endpoint: str, metadata: dict[str, str]) -> str:
        """Create the batch of ``file_id``.

        Raises:
            BatchRefusedError: an embeddings batch the endpoint refuses (400, 404, 422):
                its lines go live.
        """
        import openai

        try:
            batch = await self._call(
                self.client.batches.create,
                input_file_id=file_id,
                endpoint=endpoint,
                completion_window="24h",
                metadata=metadata,
            )
        except (
            openai.BadRequestError,
            openai.NotFoundError,
            openai.UnprocessableEntityError,
        ) as error:
            if not endpoint.endswith("/embeddings"):
                raise
            message = getattr(error, "message", "") or str(error)
            raise BatchRefusedError(
                f"the endpoint ({self.client.base_url}) refused an embeddings batch of "
                f"{self.label} ({error.status_code}: {redact(message)})"
            ) from None
        return str(batch.id)

    async def retrieve(self, batch_id: str) -> ProviderBatch:
        return ProviderBatch.of(await self._call(self.client.batches.retrieve, batch_id))

    async def cancel(self, batch_id: str) -> ProviderBatch:
        return ProviderBatch.of(await self._call(self.client.batches.cancel, batch_id))

    async def outcomes(self, file_id: str | None) -> dict[str, LineOutcome]:
        """The lines of an output or error file, by ``custom_id``."""
        if not file_id:
            return {}
        content = await self._call(self.client.files.content, file_id)
        found: dict[str, LineOutcome] = {}
        for text in content.text.splitlines():
            if text.strip():
                record = json.loads(text)
                found[str(record.get("custom_id"))] = read_outcome(record)
        return found

    async def delete(self, file_id: str) -> None:
        import openai

        with contextlib.suppress(openai.NotFoundError):  # already gone
            await self._call(self.client.files.delete, file_id)
