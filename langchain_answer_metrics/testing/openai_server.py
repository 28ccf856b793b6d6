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

Fault kinds and policies are described in :mod:`.faults`; replies in :mod:`.replies`.

Batch API: ``/v1/files`` and ``/v1/batches`` are served by :attr:`LocalOpenAIServer.batch`
(delays, failed and expired lines, failed batches: see :mod:`.batches`).

Azure OpenAI: ``azure_endpoint=server.url`` with an ``api_version`` reaches the same judge
logic and Batch API on Azure's routes (:mod:`.azure`); ``server.deployments`` names the
deployments that exist.

Realistic judge mode: ``quirks={"judge-real": REALISTIC, "judge-f": ("fenced_json",)}``
makes the listed models answer the way real models do (capitalised labels, wrong or
missing indices, claims as objects, JSON in fences or after a ``<think>`` block, tools
ignored, escaped echoes, unparsable tool arguments) without changing what they mean; the
other models reply cleanly. The quirks are described in :mod:`.quirks`;
``LoggedRequest.quirks`` says which ones changed a reply. ``quirks`` may be reassigned
while the server runs; an unknown quirk name is a ``ValueError``.

Attempts and determinism: ``RequestInfo.attempt`` counts earlier requests with the same
path and body since the last :meth:`LocalOpenAIServer.reset`. Client retries (the openai
client's own, or a ``with_retry`` wrapper) resend the same body, so ``attempt`` is the
retry number; a re-ask changes the messages and starts again at 0. :func:`random_faults`
hashes (seed, body, attempt), not arrival order, so a rerun of the same workload gets the
same faults on the same requests however requests interleave.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from http.server import ThreadingHTTPServer
from typing import Any

from langchain_answer_metrics.testing.azure import azure_request
from langchain_answer_metrics.testing.batches import BatchService
from langchain_answer_metrics.testing.faults import (
    FAULT_KINDS,
    Fault,
    FaultKind,
    FaultLike,
    FaultPolicy,
    FaultQueue,
    FaultSpec,
    as_fault,
    as_policy,
    fault_applies,
    on_attempts,
    random_faults,
)
from langchain_answer_metrics.testing.quirks import (
    QUIRKS,
    REALISTIC,
    Quirk,
    QuirkSpec,
    quirk_table,
)
from langchain_answer_metrics.testing.replies import (
    Reply,
    chat_reply,
    embed_text,
    embeddings_reply,
    error_body,
    fault_reply,
    heuristic_responder,
)
from langchain_answer_metrics.testing.requests import (
    LoggedRequest,
    RequestInfo,
    RequestMode,
    Responder,
    bearer_token,
    body_hash,
    redact_headers,
    request_info,
)
from langchain_answer_metrics.testing.transport import (
    STOP_POLL_SECONDS,
    LoopbackServer,
    QuietHTTPServer,
    RequestHandler,
)

__all__ = [
    "FAULT_KINDS",
    "QUIRKS",
    "REALISTIC",
    "Fault",
    "FaultKind",
    "FaultLike",
    "FaultPolicy",
    "FaultQueue",
    "FaultSpec",
    "LocalOpenAIServer",
    "LoggedRequest",
    "Quirk",
    "QuirkSpec",
    "RequestInfo",
    "RequestMode",
    "Responder",
    "embed_text",
    "heuristic_responder",
    "on_attempts",
    "random_faults",
    "redact_headers",
]


class LocalOpenAIServer(LoopbackServer):
    """An OpenAI-compatible HTTP server on 127.0.0.1 for tests and benchmarks.

    Use as a context manager, or call :meth:`start` / :meth:`stop`. ``responder``,
    ``faults``, ``quirks`` and ``latency`` may be reassigned while the server runs. See
    the module docstring for responders, fault kinds, quirks and attempts.
    """

    def __init__(
        self,
        *,
        responder: Responder | None = None,
        faults: FaultSpec = None,
        quirks: QuirkSpec = None,
        latency: float = 0.0,
        embedding_dim: int = 256,
        log_bodies: bool = True,
        port: int = 0,
    ) -> None:
        self.responder: Responder = responder or heuristic_responder
        self.latency = latency
        self.embedding_dim = embedding_dim
        self.log_bodies = log_bodies
        self._faults = as_policy(faults)
        self._quirks = quirk_table(quirks)
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
        self.batch = BatchService(self)  # /v1/files and /v1/batches (testing/batches.py)
        self.deployments: set[str] | None = None  # Azure deployments (None: any name)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> LocalOpenAIServer:
        """Bind a free loopback port and serve in a daemon thread. Returns self."""
        if self._httpd is not None:
            return self
        self._stopping.clear()
        httpd = QuietHTTPServer(("127.0.0.1", self._requested_port), RequestHandler)
        httpd.owner = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": STOP_POLL_SECONDS},
            daemon=True,
            name=f"LocalOpenAIServer:{self.port}",
        )
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

    def _listening(self) -> ThreadingHTTPServer | None:
        return self._httpd

    # ------------------------------------------------------------------ log

    @property
    def faults(self) -> FaultPolicy | None:
        return self._faults

    @faults.setter
    def faults(self, spec: FaultSpec) -> None:
        self._faults = as_policy(spec)

    @property
    def quirks(self) -> Mapping[str, tuple[Quirk, ...]]:
        """Model name to the quirks its replies show (realistic judge mode, :mod:`.quirks`)."""
        return self._quirks

    @quirks.setter
    def quirks(self, spec: QuirkSpec) -> None:
        self._quirks = quirk_table(spec)

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
        self.batch.reset()

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

    def serve_request(
        self, method: str, path: str, raw_body: bytes, headers: Mapping[str, str]
    ) -> Reply:
        """Files and Batches requests to :attr:`batch`; the others to :meth:`handle`;
        Azure's routes read as OpenAI's (:mod:`.azure`)."""
        azure = azure_request(path, self.deployments)
        if azure is not None and azure.refusal is not None:
            return azure.refusal
        route = azure.route if azure is not None else path.split("?", 1)[0].rstrip("/")
        reply = self.batch.route(method, route, raw_body, headers, azure=azure is not None)
        if reply is not None:
            return reply
        if azure is None:  # (subclasses may override handle() without ``deployment``)
            return self.handle(path, raw_body, headers)
        return self.handle(path, raw_body, headers, deployment=azure.deployment)

    def answer_line(self, route: str, body: dict[str, Any], headers: Mapping[str, str]) -> Reply:
        """A batch line's reply: the live logic, not logged or counted as a live request."""
        info = request_info(route, body, headers, attempt=0, number=-1, hashed="")
        return self._reply(info, None)

    def handle(
        self,
        path: str,
        raw_body: bytes,
        headers: Mapping[str, str],
        *,
        deployment: str | None = None,
    ) -> Reply:
        """Answer one request (called from the HTTP handler threads); ``deployment``: the
        Azure deployment the path names, which answers as the model."""
        route = path.split("?", 1)[0].rstrip("/")
        if route.endswith("/models"):
            return Reply(200, {"object": "list", "data": []})
        if not (route.endswith("/chat/completions") or route.endswith("/embeddings")):
            return Reply(404, error_body(f"no route {path}", "invalid_request_error"))
        try:
            body = json.loads(raw_body or b"{}")
            if not isinstance(body, dict):
                raise ValueError("the body is not a JSON object")
        except ValueError as error:
            return Reply(400, error_body(f"invalid JSON body: {error}", "invalid_request_error"))

        hashed = body_hash(route, body)
        with self._lock:
            attempt = self._attempts.get(hashed, 0)
            self._attempts[hashed] = attempt + 1
            number = self._number
            self._number += 1
        named = body if deployment is None else {**body, "model": deployment}
        info = request_info(route, named, headers, attempt=attempt, number=number, hashed=hashed)
        fault = None
        if self._faults is not None:
            fault = as_fault(self._faults(info))
            if fault is not None and not fault_applies(fault, info):
                fault = None

        try:
            reply = self._reply(info, fault, bearer_token(headers))
        except Exception as error:
            # A responder bug is not transient: tell the openai client not to retry it.
            reply = Reply(
                500,
                error_body(f"responder failed: {error!r}", "server_error"),
                {"x-should-retry": "false"},
            )
        self._record(info, body, fault, reply)
        self._sleep(self.latency)
        if fault is not None and fault.kind == "slow":
            self._sleep(fault.delay)
        return reply

    def _record(
        self, info: RequestInfo, body: dict[str, Any], fault: Fault | None, reply: Reply
    ) -> None:
        entry = LoggedRequest(
            number=info.number,
            path=info.path,
            body=body if self.log_bodies else None,
            headers=dict(info.headers),
            model=info.model,
            attempt=info.attempt,
            fault=fault.kind if fault else None,
            status=reply.status,
            quirks=reply.quirks,
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

    def _reply(self, info: RequestInfo, fault: Fault | None, api_key: str = "") -> Reply:
        error = fault_reply(fault, api_key)
        if error is not None:
            return error
        if info.mode == "embeddings":
            return embeddings_reply(info, self.embedding_dim)
        return chat_reply(info, fault, self.responder, self._quirks.get(info.model, ()))


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
