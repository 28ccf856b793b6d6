"""The HTTP layer of the local OpenAI-compatible server: threads, keep-alive, quiet errors.

Every request is handed to the owning server's ``handle(path, body, headers)``.
"""

from __future__ import annotations

import contextlib
import json
import socket
import socketserver
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

# How often a server's loop looks for stop(): socketserver has no wake-up, so stop() waits
# up to this long, and a test suite stops its servers hundreds of times.
STOP_POLL_SECONDS = 0.01


class LoopbackServer:
    """What every local test server shares: its loopback port and URLs, and ``with``
    (start on entry, stop on exit). A server says what it has bound in ``_listening``."""

    def _listening(self) -> socketserver.TCPServer | None:
        """The bound server, or None while it is not running."""
        raise NotImplementedError

    def start(self) -> Self:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    @property
    def port(self) -> int:
        listening = self._listening()
        if listening is None:
            raise RuntimeError("the server is not running; call start()")
        return int(listening.server_address[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (no ``/v1``)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``, for ``ChatOpenAI(base_url=...)``."""
        return f"{self.url}/v1"

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()


class QuietHTTPServer(ThreadingHTTPServer):
    daemon_threads = True  # a stalled ("slow") handler must not block shutdown
    request_queue_size = 256  # bursts of concurrent connects must not overflow the backlog
    owner: Any  # the LocalOpenAIServer answering (it has handle() and _register())

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients that time out or hang up are expected (the "slow" fault); stay quiet.
        return


class RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: clients reuse connections under load
    timeout = 60  # idle keep-alive connections release their thread eventually
    server: QuietHTTPServer

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

    def do_DELETE(self) -> None:
        self._serve(b"")

    def _serve(self, raw_body: bytes) -> None:
        owner, headers = self.server.owner, dict(self.headers.items())
        # An owner with serve_request sees the method (the Files and Batches API).
        serve = getattr(owner, "serve_request", None)
        if serve is not None:
            reply = serve(self.command, self.path, raw_body, headers)
        else:
            reply = owner.handle(self.path, raw_body, headers)
        raw = getattr(reply, "raw", None)
        payload = raw if raw is not None else json.dumps(reply.body, ensure_ascii=False).encode()
        try:
            self.send_response(reply.status)
            if "content-type" not in reply.headers:
                self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
        except OSError:
            # The client gave up (timeout) or the server is stopping.
            self.close_connection = True
