"""The HTTP layer of the local OpenAI-compatible server: threads, keep-alive, quiet errors.

Every request is handed to the owning server's ``handle(path, body, headers)``.
"""

from __future__ import annotations

import contextlib
import json
import socket
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


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
