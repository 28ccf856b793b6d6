"""A local server that misbehaves the ways real endpoints do, for tests of deadlines and caps.

Each :class:`HostileServer` listens on 127.0.0.1 (a free port) and answers every request
with one behaviour (:data:`BEHAVIOURS`):

- ``"silent"``: accepts the connection, reads the request, and says nothing;
- ``"close"``: starts a 200 reply and closes the connection mid-body;
- ``"trickle"``: answers 200, then sends one byte every ``trickle_interval`` seconds
  (defeats a read timeout, which restarts at every byte);
- ``"flood"``: answers 200 with a body that never ends (chunked, ``flood_chunk`` bytes at
  a time);
- ``"echo_401"``: answers 401 with an error message quoting the request's
  ``Authorization`` header, as some providers do with a wrong key.

Stdlib only. Every loop is bounded: a connection is held at most ``max_seconds`` and a
flood sends at most ``max_flood_bytes``, so a test that goes wrong still ends. The server
stops itself when the ``with`` block exits (its threads are daemons)::

    with HostileServer("trickle") as server:
        llm = ChatOpenAI(base_url=server.base_url, api_key="sk-test", model="m",
                         use_responses_api=False, timeout=2)
        ...
        assert server.requests >= 1
"""

from __future__ import annotations

import contextlib
import json
import socket
import socketserver
import threading
import time
from typing import Literal, get_args

from langchain_answer_metrics.testing.transport import STOP_POLL_SECONDS, LoopbackServer

__all__ = ["BEHAVIOURS", "Behaviour", "HostileServer"]

Behaviour = Literal["silent", "close", "trickle", "flood", "echo_401"]
BEHAVIOURS: tuple[Behaviour, ...] = get_args(Behaviour)

_MAX_HEADER_BYTES = 64 * 1024
_MAX_BODY_BYTES = 16 * 1024 * 1024


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: HostileServer


class _Handler(socketserver.BaseRequestHandler):
    server: _Server

    def handle(self) -> None:
        owner = self.server.owner
        connection: socket.socket = self.request
        connection.settimeout(1.0)
        authorization = _read_request(connection, owner)
        if authorization is None:
            return
        with owner._lock:
            owner.requests += 1
        with contextlib.suppress(OSError):
            getattr(self, f"_{owner.behaviour}")(connection, owner, authorization)

    def _silent(self, connection: socket.socket, owner: HostileServer, _: str) -> None:
        owner._stopping.wait(owner.max_seconds)

    def _close(self, connection: socket.socket, owner: HostileServer, _: str) -> None:
        connection.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            b'Content-Length: 4096\r\n\r\n{"id": "chatcmpl-1", "choices": ['
        )
        connection.shutdown(socket.SHUT_RDWR)

    def _trickle(self, connection: socket.socket, owner: HostileServer, _: str) -> None:
        body_length = 1_000_000
        connection.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {body_length}\r\n\r\n".encode()
        )
        payload = b'{"id": "' + b"a" * body_length
        give_up = time.monotonic() + owner.max_seconds
        for index in range(body_length):
            if time.monotonic() > give_up or owner._stopping.is_set():
                return
            connection.sendall(payload[index : index + 1])
            if owner._stopping.wait(owner.trickle_interval):
                return

    def _flood(self, connection: socket.socket, owner: HostileServer, _: str) -> None:
        connection.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        chunk = b"a" * owner.flood_chunk
        framed = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
        connection.sendall(b'5\r\n{"id"\r\n')
        sent = 0
        give_up = time.monotonic() + owner.max_seconds
        while sent < owner.max_flood_bytes and time.monotonic() < give_up:
            if owner._stopping.is_set():
                return
            connection.sendall(framed)  # raises once the client hangs up
            sent += len(chunk)
            with owner._lock:
                owner.flooded_bytes += len(chunk)

    def _echo_401(self, connection: socket.socket, owner: HostileServer, auth: str) -> None:
        body = json.dumps(
            {
                "error": {
                    "message": f"Incorrect API key provided: {auth}. You can find your "
                    "API key at https://example.test/keys.",
                    "type": "invalid_request_error",
                    "code": "invalid_api_key",
                }
            }
        ).encode()
        connection.sendall(
            b"HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
            + body
        )


def _receive_more(connection: socket.socket, owner: HostileServer, give_up: float) -> bytes | None:
    """The next bytes from the client (b"" after a quiet interval), or None if the
    client went away, the server is stopping or the request took too long."""
    if time.monotonic() > give_up or owner._stopping.is_set():
        return None
    try:
        received = connection.recv(65536)
    except TimeoutError:
        return b""
    except OSError:
        return None
    return received or None


def _read_request(connection: socket.socket, owner: HostileServer) -> str | None:
    """Read one request (headers and body); its Authorization header ("" if none), or
    None if the client went away or the server is stopping."""
    data = b""
    give_up = time.monotonic() + owner.max_seconds
    while b"\r\n\r\n" not in data:
        received = _receive_more(connection, owner, give_up)
        if received is None or len(data) > _MAX_HEADER_BYTES:
            return None
        data += received
    head, _, body = data.partition(b"\r\n\r\n")
    authorization = ""
    length = 0
    for line in head.decode("latin-1").split("\r\n")[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "authorization":
            authorization = value.strip()
        elif name.strip().lower() == "content-length":
            with contextlib.suppress(ValueError):
                length = min(int(value.strip()), _MAX_BODY_BYTES)
    while len(body) < length:
        received = _receive_more(connection, owner, give_up)
        if received is None:
            return None
        body += received
    return authorization


class HostileServer(LoopbackServer):
    """A loopback HTTP server answering every request with one hostile ``behaviour``.

    Args:
        behaviour: One of :data:`BEHAVIOURS` (see the module docstring).
        max_seconds: The longest a connection is held (silence, trickle, flood).
        trickle_interval: Seconds between the bytes of a trickle.
        flood_chunk: Bytes per chunk of a flood.
        max_flood_bytes: The most a flood sends on one connection.

    Example:
        >>> with HostileServer("echo_401") as server:  # doctest: +SKIP
        ...     server.base_url
        'http://127.0.0.1:54321/v1'
    """

    def __init__(
        self,
        behaviour: Behaviour,
        *,
        max_seconds: float = 60.0,
        trickle_interval: float = 1.0,
        flood_chunk: int = 64 * 1024,
        max_flood_bytes: int = 4 * 1024**3,
    ) -> None:
        if behaviour not in BEHAVIOURS:
            raise ValueError(f"unknown behaviour {behaviour!r}; expected one of {BEHAVIOURS}")
        self.behaviour = behaviour
        self.max_seconds = max_seconds
        self.trickle_interval = trickle_interval
        self.flood_chunk = flood_chunk
        self.max_flood_bytes = max_flood_bytes
        self.requests = 0
        """Requests read so far."""
        self.flooded_bytes = 0
        """Body bytes a flood has sent so far (across connections)."""
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def _listening(self) -> _Server | None:
        return self._server

    def start(self) -> HostileServer:
        server = _Server(("127.0.0.1", 0), _Handler)
        server.owner = self
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": STOP_POLL_SECONDS},
            name=f"hostile-server-{self.behaviour}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release every held connection (within about a second)."""
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
