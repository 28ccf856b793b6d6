"""The command started by fork from a warm interpreter: for tests that start it many times
and signal it only once it has long finished importing (tests/test_ctrl_c.py).

A new interpreter imports LangChain, the openai client and the command before its first
request: 2 to 3 CPU seconds a start, most of a short run's cost. :class:`WarmCommand`
starts one interpreter (this file, run as a script) that imports all that once; each
:meth:`WarmCommand.start` forks it, and the child runs the command's own entry point
(``langchain_answer_metrics.cli.console``, what ``python -m langchain_answer_metrics.cli``
runs), with its own pid, arguments, output files and exit code. From ``console()`` on
the child runs the same code as a new process, so a signal sent once it runs its command
meets the same handler, run and exit; only a signal landing in the imports differs, and
a test of those starts a new interpreter (:func:`support.evaluate_process`).

    >>> with WarmCommand(env) as warm:
    ...     run = warm.start(["evaluate", ...], tmp_path)
    ...     run.send_signal(signal.SIGINT)
    ...     _, stderr = run.communicate(timeout=300)
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

# --------------------------------------------------------------------------- the test's side


class ForkedRun:
    """One run forked by :class:`WarmCommand`, used as a ``subprocess.Popen`` is."""

    def __init__(self, pid: int, stdout: Path, stderr: Path) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._stdout, self._stderr = stdout, stderr
        self._ended = threading.Event()

    def _end(self, code: int) -> None:
        self.returncode = code
        self._ended.set()

    def poll(self) -> int | None:
        return self.returncode

    def send_signal(self, number: int) -> None:
        if self.returncode is None:  # not yet reaped by the warm interpreter: still ours
            os.kill(self.pid, number)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def wait(self, timeout: float | None = None) -> int:
        if not self._ended.wait(timeout):
            raise subprocess.TimeoutExpired(f"forked run {self.pid}", timeout or 0)
        assert self.returncode is not None
        return self.returncode

    def communicate(self, timeout: float | None = None) -> tuple[str, str]:
        """Wait for the end; its standard output and error, as text."""
        self.wait(timeout)
        return (
            self._stdout.read_text("utf-8", errors="replace"),
            self._stderr.read_text("utf-8", errors="replace"),
        )


class WarmCommand:
    """An interpreter that has imported the command, forking a run of it on demand."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self._process = subprocess.Popen(
            [sys.executable, __file__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=dict(env),
        )
        self._lock = threading.Lock()
        self._runs: dict[int, ForkedRun] = {}
        self._started: list[ForkedRun] = []
        self._news = threading.Condition()
        self._count = 0
        assert self._line() == "ready", "the warm interpreter did not start"
        self._reader = threading.Thread(target=self._read, name="warm command", daemon=True)
        self._reader.start()

    def _line(self) -> str:
        assert self._process.stdout is not None
        return self._process.stdout.readline().strip()

    def _read(self) -> None:
        while line := self._line():
            event, pid, *code = line.split()
            with self._news:
                if event == "started":
                    run = self._runs[int(pid)] = ForkedRun(int(pid), *self._pending)
                    self._started.append(run)
                else:
                    self._runs.pop(int(pid))._end(int(code[0]))
                self._news.notify_all()

    def start(self, argv: Sequence[str], folder: Path) -> ForkedRun:
        """``answer-metrics ARGV`` forked; its output goes to files in ``folder``."""
        assert self._process.stdin is not None
        with self._lock, self._news:
            self._count += 1
            self._pending = (
                folder / f"fork-{self._count}.stdout",
                folder / f"fork-{self._count}.stderr",
            )
            request = {"argv": list(argv), "stdout": str(self._pending[0])}
            request["stderr"] = str(self._pending[1])
            self._process.stdin.write(json.dumps(request) + "\n")
            self._process.stdin.flush()
            started = len(self._started)
            assert self._news.wait_for(lambda: len(self._started) > started, 120)
            return self._started[-1]

    def __enter__(self) -> WarmCommand:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        with self._news:
            for run in self._runs.values():
                run.kill()
        assert self._process.stdin is not None
        self._process.stdin.close()  # the warm interpreter ends when its input does
        self._process.wait(60)


# --------------------------------------------------------------------------- the warm side


def _child(request: dict[str, Any]) -> None:
    """In the forked child: the request's output files, arguments and the command."""
    for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
        opened = os.open(str(path), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(opened, fd)
        os.close(opened)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.argv = ["answer-metrics", *request["argv"]]
    from langchain_answer_metrics.cli import console

    console()  # never returns: the command ends the process with its exit code


def _serve() -> None:
    # What a run of `evaluate` imports before its first request, once for every fork.
    import langchain_openai  # noqa: F401
    import openai  # noqa: F401

    import langchain_answer_metrics.cli.command
    import langchain_answer_metrics.cli.run  # noqa: F401
    from langchain_answer_metrics import Faithfulness  # noqa: F401

    print("ready", flush=True)
    children: set[int] = set()
    pending = b""
    while True:
        readable, _, _ = select.select([0], [], [], 0.005)
        if readable:
            chunk = os.read(0, 65536)
            if not chunk:
                break
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                pid = os.fork()
                if pid == 0:
                    _child(json.loads(line))
                children.add(pid)
                print(f"started {pid}", flush=True)
        for pid in list(children):
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                children.discard(pid)
                print(f"ended {pid} {os.waitstatus_to_exitcode(status)}", flush=True)
    for pid in children:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


if __name__ == "__main__":
    _serve()
