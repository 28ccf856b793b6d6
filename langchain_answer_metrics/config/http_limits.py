"""HTTP clients with a whole-request deadline and a cap on a reply's size, for the models a
config builds.

An httpx timeout is per operation: the read timeout restarts at every byte, so a server
sending one byte a second holds a request for ever, and nothing limits how much a reply
may hold. The clients built here (:func:`limited_http_clients`, passed to ``ChatOpenAI`` /
``OpenAIEmbeddings`` as ``http_client`` / ``http_async_client``) add, to each HTTP request:

- a deadline for the whole of it, connection to last byte: past ``deadline`` seconds it
  fails with a read timeout (``openai.APITimeoutError``), like a silent server. The async
  client enforces it to the moment; the sync one checks it at every chunk received, so a
  reply that stalls completely ends at the read timeout (the same ``timeout``);
- a cap on the bytes of a reply (``max_bytes``, counted as received, before any
  decompression): past it, or when ``Content-Length`` announces more, the request fails
  with a read error (``openai.APIConnectionError``), as a dropped connection would.

Both failures are endpoint failures (retried as configured, counted by the circuit
breaker); :func:`~langchain_answer_metrics.judging.endpoints.error_text` shows why.
Every request the clients send is counted
(:func:`~langchain_answer_metrics.judging.deadline.note_http_send`), so the openai
client's own retries are requests in ``max_requests`` and the spend like the package's.
The clients are the openai SDK's default ones (same connection limits and redirects),
subclassed; httpx is imported only when a model is built.
"""

from __future__ import annotations

import asyncio
import functools
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

from langchain_answer_metrics.judging.deadline import RequestLimitError, note_http_send

__all__ = [
    "MAX_CHAT_REPLY_BYTES",
    "embedding_reply_cap",
    "limited_http_clients",
]

MAX_CHAT_REPLY_BYTES = 8 * 1024 * 1024
"""The most a chat reply may hold: 8 MiB. A judge's reply is a few kB of JSON (a long
verification with ``n`` choices and usage stays under 1 MiB)."""

# A number in an embeddings reply as JSON: up to 24 characters ("-1.2345678901234567e-05,"),
# plus room for a pretty-printing server's newline and indentation.
_BYTES_PER_NUMBER = 32
# The widest embeddings in common use (e.g. 4096-dimension models).
_ASSUMED_DIMENSIONS = 4096
_MIN_EMBEDDING_REPLY_BYTES = 16 * 1024 * 1024


def embedding_reply_cap(batch_size: int, dimensions: int | None) -> int:
    """The most an embeddings reply may hold: ``batch_size`` vectors of ``dimensions``
    numbers (4096 when not set) at 32 bytes each, plus 1 MiB; at least 16 MiB.

    Measured: 128 vectors of 3072 numbers as JSON take 5.1 MiB with the shortest float32
    text (13 bytes a number, OpenAI's) and 8.3 MiB with float32s written as doubles (22
    bytes a number, as some local servers do); the cap for that batch is 16 MiB.

        >>> embedding_reply_cap(128, 1536) // 2**20
        16
    """
    numbers = batch_size * (dimensions or _ASSUMED_DIMENSIONS)
    return max(_MIN_EMBEDDING_REPLY_BYTES, numbers * _BYTES_PER_NUMBER + 1024 * 1024)


def _httpx_of(client_class: type) -> Any:
    """The httpx module (``httpx`` or its successor) the openai SDK's client is made of."""
    for cls in client_class.__mro__:
        module = sys.modules.get(cls.__module__.split(".")[0])
        if module is not None and hasattr(module, "SyncByteStream") and cls.__name__ == "Client":
            return module
        if (
            module is not None
            and hasattr(module, "AsyncByteStream")
            and cls.__name__ == ("AsyncClient")
        ):
            return module
    raise RuntimeError(f"cannot find the httpx module behind {client_class.__name__}")


def limited_http_clients(*, deadline: float, max_bytes: int) -> dict[str, Any]:
    """``http_client`` and ``http_async_client`` for ``ChatOpenAI`` / ``OpenAIEmbeddings``:
    every request ends within ``deadline`` seconds and its reply holds at most
    ``max_bytes``.

    The models with the same limits share one pair of clients (and their connection
    pools), as langchain-openai's own default clients are shared: making a client loads
    the TLS certificates, too slow to repeat for every model of a large config.

        >>> clients = limited_http_clients(deadline=60, max_bytes=8 * 2**20)
        >>> ChatOpenAI(model="m", **clients)  # doctest: +SKIP
    """
    return dict(_clients(float(deadline), int(max_bytes)))


@dataclass(frozen=True)
class _Limits:
    """One pair of clients' limits, and the errors that end a request past them: httpx's
    own classes, so that the openai SDK handles them as it does a read timeout or a
    dropped connection; and RequestLimitError, so that results say which limit it was."""

    deadline: float
    max_bytes: int
    deadline_class: type[Exception]
    size_class: type[Exception]

    @classmethod
    def of(cls, httpx: Any, deadline: float, max_bytes: int) -> _Limits:
        return cls(
            deadline,
            max_bytes,
            type("WholeRequestDeadline", (httpx.ReadTimeout, RequestLimitError), {}),
            type("ReplyTooLarge", (httpx.ReadError, RequestLimitError), {}),
        )

    def deadline_error(self, request: Any) -> Exception:
        message = f"the whole request took longer than its {self.deadline:g} s deadline"
        return self.deadline_class(message, request=request)  # type: ignore[call-arg]

    def size_error(self, request: Any) -> Exception:
        message = f"the reply was larger than the {self.max_bytes:,}-byte cap on a reply"
        return self.size_class(message, request=request)  # type: ignore[call-arg]

    def check_length(self, response: Any) -> None:
        """Refuse a reply whose ``Content-Length`` announces more than the cap."""
        announced = response.headers.get("content-length", "")
        if announced.isdigit() and int(announced) > self.max_bytes:
            raise self.size_error(response.request)


def _limited_stream(httpx: Any, limits: _Limits) -> type:
    """The class of a reply's body that counts its bytes against the cap and ends at the
    deadline (to the moment in async code; at each chunk in sync code)."""

    class Limited(httpx.SyncByteStream, httpx.AsyncByteStream):
        def __init__(self, stream: Any, request: Any, ends_at: float) -> None:
            self.stream = stream
            self.request = request
            self.ends_at = ends_at
            self.received = 0

        def count(self, chunk: bytes) -> None:
            self.received += len(chunk)
            if self.received > limits.max_bytes:
                raise limits.size_error(self.request)
            if time.monotonic() > self.ends_at:
                raise limits.deadline_error(self.request)

        def __iter__(self) -> Iterator[bytes]:
            for chunk in self.stream:
                self.count(chunk)
                yield chunk

        async def __aiter__(self) -> AsyncIterator[bytes]:
            iterator = self.stream.__aiter__()
            while True:
                remaining = self.ends_at - time.monotonic()
                try:
                    async with asyncio.timeout(max(remaining, 0.0)):
                        chunk = await iterator.__anext__()
                except StopAsyncIteration:
                    return
                except TimeoutError:
                    raise limits.deadline_error(self.request) from None
                self.count(chunk)
                yield chunk

        def close(self) -> None:
            self.stream.close()

        async def aclose(self) -> None:
            await self.stream.aclose()

    return Limited


def _client_classes(openai: Any, limits: _Limits, limited: type) -> tuple[type, type]:
    """The openai SDK's default sync and async clients, each request counted, streamed
    through ``limited`` and read within the deadline."""
    deadline = limits.deadline

    class LimitedClient(openai.DefaultHttpxClient):
        def send(self, request: Any, *, stream: bool = False, **kwargs: Any) -> Any:
            ends_at = time.monotonic() + deadline
            note_http_send()
            response = super().send(request, stream=True, **kwargs)
            try:
                limits.check_length(response)
                response.stream = limited(response.stream, request, ends_at)
                if not stream:
                    response.read()
            except BaseException:
                response.close()
                raise
            return response

    class LimitedAsyncClient(openai.DefaultAsyncHttpxClient):
        async def send(self, request: Any, *, stream: bool = False, **kwargs: Any) -> Any:
            ends_at = time.monotonic() + deadline
            note_http_send()
            try:
                async with asyncio.timeout(deadline):
                    response = await super().send(request, stream=True, **kwargs)
            except TimeoutError:
                raise limits.deadline_error(request) from None
            try:
                limits.check_length(response)
                response.stream = limited(response.stream, request, ends_at)
                if not stream:
                    await response.aread()
            except BaseException:
                await response.aclose()
                raise
            return response

    return LimitedClient, LimitedAsyncClient


@functools.lru_cache(maxsize=64)
def _clients(deadline: float, max_bytes: int) -> tuple[tuple[str, Any], ...]:
    import openai

    httpx = _httpx_of(openai.DefaultHttpxClient)
    limits = _Limits.of(httpx, deadline, max_bytes)
    sync_client, async_client = _client_classes(openai, limits, _limited_stream(httpx, limits))
    return (("http_client", sync_client()), ("http_async_client", async_client()))
