"""The local OpenAI-compatible server in its own process, so the client's CPU is measurable.

    with ServerProcess(latency=0.0) as server:
        ChatOpenAI(base_url=server.base_url, ...)
        server.reset()
        ...
        stats = server.stats()  # chat / embedding requests, prompt / completion tokens

The child (this file run as a script) serves :class:`LocalOpenAIServer` (request bodies
not logged, so it stays small on long runs) and answers JSON commands, one per line on
its stdin: stats, reset, latency, times, stop.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from langchain_answer_metrics.testing.openai_server import (
    Fault,
    LocalOpenAIServer,
    RequestInfo,
)


@dataclass
class ServerStats:
    """What the server saw since the last reset."""

    chat_requests: int
    embedding_requests: int
    prompt_tokens: int
    completion_tokens: int
    embedding_tokens: int
    n_values: dict[int, int]
    """How many chat requests asked for each ``n`` (number of choices)."""


class _CountingServer(LocalOpenAIServer):
    """Adds token and ``n`` counters to the request counters the server already keeps."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._tokens_lock = threading.Lock()
        self._zero()

    def _zero(self) -> None:
        self.prompt_tokens = self.completion_tokens = self.embedding_tokens = 0
        self.n_values: dict[int, int] = {}
        # (arrived, answered) per request, on the system-wide monotonic clock, which the
        # client process reads too (time.monotonic): where a run's time went.
        self.times: list[tuple[float, float]] = []

    def handle(self, path: str, raw_body: bytes, headers: Mapping[str, str]) -> Any:
        arrived = time.monotonic()
        reply = super().handle(path, raw_body, headers)
        with self._tokens_lock:
            self.times.append((arrived, time.monotonic()))
        return reply

    def reset(self) -> None:
        super().reset()
        with self._tokens_lock:
            self._zero()

    def _reply(self, info: RequestInfo, fault: Fault | None, api_key: str = "") -> Any:
        reply = super()._reply(info, fault, api_key)
        usage = reply.body.get("usage") or {}
        with self._tokens_lock:
            if info.mode == "embeddings":
                self.embedding_tokens += int(usage.get("prompt_tokens", 0))
            else:
                self.prompt_tokens += int(usage.get("prompt_tokens", 0))
                self.completion_tokens += int(usage.get("completion_tokens", 0))
                n = int(info.body.get("n") or 1)
                self.n_values[n] = self.n_values.get(n, 0) + 1
        return reply

    def stats(self) -> ServerStats:
        with self._tokens_lock:
            return ServerStats(
                chat_requests=self.chat_requests,
                embedding_requests=self.embedding_requests,
                prompt_tokens=self.prompt_tokens,
                completion_tokens=self.completion_tokens,
                embedding_tokens=self.embedding_tokens,
                n_values=dict(self.n_values),
            )


def _serve(latency: float) -> None:
    """The child: serve, and answer one JSON command per stdin line on stdout."""
    server = _CountingServer(latency=latency, log_bodies=False)
    with server:
        print(json.dumps(server.base_url), flush=True)
        for line in sys.stdin:
            command, argument = json.loads(line)
            answer: Any = None
            if command == "stats":
                answer = dataclasses.asdict(server.stats())
            elif command == "reset":
                server.reset()
            elif command == "latency":
                server.latency = float(argument)
            elif command == "times":
                with server._tokens_lock:
                    answer = sorted(server.times)
            print(json.dumps(answer), flush=True)
            if command == "stop":
                return


class ServerProcess:
    """A :class:`LocalOpenAIServer` running in a child interpreter."""

    def __init__(self, *, latency: float = 0.0) -> None:
        self._latency = latency
        self._process: subprocess.Popen[str] | None = None
        self.base_url = ""

    def _ask(self, command: str, argument: Any = None) -> Any:
        assert self._process is not None and self._process.stdin and self._process.stdout
        self._process.stdin.write(json.dumps([command, argument]) + "\n")
        self._process.stdin.flush()
        return json.loads(self._process.stdout.readline())

    def start(self) -> ServerProcess:
        self._process = subprocess.Popen(
            [sys.executable, __file__, str(self._latency)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._process.stdout is not None
        self.base_url = json.loads(self._process.stdout.readline())
        return self

    def stats(self) -> ServerStats:
        answer = self._ask("stats")
        answer["n_values"] = {int(n): count for n, count in answer["n_values"].items()}
        return ServerStats(**answer)

    def reset(self) -> None:
        self._ask("reset")

    def set_latency(self, seconds: float) -> None:
        self._ask("latency", seconds)

    def times(self) -> list[tuple[float, float]]:
        """(arrived, answered) per request since the last reset, on ``time.monotonic``'s
        clock (system-wide), in order of arrival."""
        return [(arrived, answered) for arrived, answered in self._ask("times")]

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            try:
                assert process.stdin is not None and process.stdout is not None
                process.stdin.write(json.dumps(["stop", None]) + "\n")
                process.stdin.flush()
                process.stdout.readline()
                process.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                process.terminate()
                process.wait(timeout=10)

    def __enter__(self) -> ServerProcess:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()


if __name__ == "__main__":
    _serve(float(sys.argv[1]) if len(sys.argv) > 1 else 0.0)
