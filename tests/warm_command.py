"""The command started by fork from a warm interpreter, for tests that start it many
times where its imports are not what they test: the Ctrl-C runs interrupted once running
(tests/test_ctrl_c.py) and the documentation's command-line blocks
(tests/test_docs_examples.py).

A new interpreter imports LangChain, the openai client and the command before its first
request: 2 to 3 CPU seconds a start, most of a short run's cost. :class:`WarmCommand`
starts one interpreter (this file, run as a script) that imports all that once; each run
is a fork of it, whose child runs the command's own entry point
(``langchain_answer_metrics.cli.console``, what the installed ``answer-metrics`` runs)
with its own pid, arguments, standard streams (made anew, as a new interpreter makes
them), exit code and, for a shell, working directory and environment. From ``console()``
on the child runs the same code as a new process; only a signal landing in the imports
differs, and a test of those starts a new interpreter (:func:`support.evaluate_process`).

    >>> with WarmCommand(env) as warm:
    ...     run = warm.start(["evaluate", ...], tmp_path)
    ...     run.send_signal(signal.SIGINT)
    ...     _, stderr = run.communicate(timeout=300)

With ``shell_bin=folder``, ``folder/answer-metrics`` (a small script: first on a shell's
PATH) sends its arguments, directory, environment and its three streams (as file
descriptors) to the warm interpreter and exits with the forked run's exit code.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
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


SHIM = """#!{python} -IS
# answer-metrics, run by a warm interpreter (tests/warm_command.py): the request carries
# this process's arguments, working directory and environment, and its three standard
# streams as file descriptors; the reply is the command's exit code.
import json, os, socket, sys

connection = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
connection.connect({address!r})
request = {{"argv": sys.argv[1:], "cwd": os.getcwd(), "env": dict(os.environ)}}
socket.send_fds(connection, [json.dumps(request).encode()], [0, 1, 2])
code = int(connection.recv(16) or b"-9")
sys.exit(code if code >= 0 else 128 - code)
"""


class WarmCommand:
    """An interpreter that has imported the command, forking a run of it on demand."""

    def __init__(self, env: Mapping[str, str], *, shell_bin: Path | None = None) -> None:
        """``env``: the warm interpreter's environment. With ``shell_bin``, a folder, an
        ``answer-metrics`` there (first on a shell's PATH) runs the command by this
        interpreter too, with the shell's arguments, streams, directory and environment."""
        command = [sys.executable, __file__]
        self._address_folder = tempfile.mkdtemp(prefix="warm-")  # a socket's path is short
        if shell_bin is not None:
            address = os.path.join(self._address_folder, "socket")
            command.append(address)
            shim = shell_bin / "answer-metrics"
            shim.write_text(SHIM.format(python=sys.executable, address=address), "utf-8")
            shim.chmod(0o755)
        self._process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=dict(env)
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
        shutil.rmtree(self._address_folder, ignore_errors=True)


# --------------------------------------------------------------------------- the warm side

SCRIPT = os.path.join(os.path.dirname(sys.executable), "answer-metrics")
"""Where the installed command is: a forked run looks started from it."""


_REPLACED: list[Any] = []
"""The warm interpreter's own standard streams: kept, so that no collection closes the
file descriptors 0 to 2 they were made on, now a child's."""


def _fresh_streams() -> None:
    """``sys.stdin``, ``stdout`` and ``stderr`` made anew on the file descriptors 0 to 2
    now in place, as an interpreter makes them when it starts (line-buffered on a
    terminal, stderr always; the encoding and errors this environment gave the warm one)."""
    for name, fd, mode in (("stdin", 0, "r"), ("stdout", 1, "w"), ("stderr", 2, "w")):
        old = getattr(sys, name)
        _REPLACED.append(old)
        stream = io.TextIOWrapper(
            open(fd, f"{mode}b", closefd=False),  # noqa: SIM115 (open until the process ends)
            encoding=old.encoding,
            errors=old.errors,
            newline="\n",  # as on POSIX: no translation
            line_buffering=name == "stderr" or os.isatty(fd),
        )
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def _run_command(argv: list[str]) -> None:
    """In a forked child, its streams in place: the command, as its script runs it."""
    _fresh_streams()
    sys.argv = [SCRIPT, *argv]
    sys.path[0] = os.path.dirname(SCRIPT)  # as in the script's interpreter, not this file's
    from langchain_answer_metrics.cli import console

    console()  # never returns: the command ends the process with its exit code


def _child(request: dict[str, Any]) -> None:
    """A run for the test: its output to the request's files, no input."""
    for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
        opened = os.open(str(path), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(opened, fd)
        os.close(opened)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    _run_command(request["argv"])


def _shell_child(request: dict[str, Any], streams: list[int], *sockets: socket.socket) -> None:
    """A run for a shell's ``answer-metrics`` (:data:`SHIM`): its streams, working
    directory and environment."""
    for target, fd in zip((0, 1, 2), streams):
        os.dup2(fd, target)
    for fd in streams:
        os.close(fd)
    for each in sockets:
        each.close()
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    _run_command(request["argv"])


def _preload() -> None:
    """What a run imports before its first request, once for every fork."""
    import langchain_openai  # noqa: F401
    import openai  # noqa: F401

    import langchain_answer_metrics.cli.command
    import langchain_answer_metrics.cli.run  # noqa: F401
    from langchain_answer_metrics import Faithfulness  # noqa: F401


class _Server:
    """The warm side: forks a run for each line on its input (reported on its output as
    ``started PID`` / ``ended PID CODE``) and for each shell's request on its socket (its
    exit code sent back)."""

    def __init__(self, socket_path: str | None) -> None:
        self.listener: socket.socket | None = None
        if socket_path:
            self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            self.listener.bind(socket_path)
            self.listener.listen(64)
        self.connections: list[socket.socket] = []
        self.reported: set[int] = set()
        self.shells: dict[int, socket.socket] = {}
        self.pending = b""

    def serve(self) -> None:
        print("ready", flush=True)
        while self._step():
            self._reap()
        for pid in [*self.reported, *self.shells]:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)

    def _step(self) -> bool:
        watched: list[Any] = [0, *self.connections]
        watched += [self.listener] if self.listener else []
        readable, _, _ = select.select(watched, [], [], 0.005)
        for ready in readable:
            if ready == 0:
                chunk = os.read(0, 65536)
                if not chunk:
                    return False  # the test is done
                self._requests(chunk)
            elif ready is self.listener:
                self.connections.append(self.listener.accept()[0])
            else:
                self.connections.remove(ready)
                self._shell_request(ready)
        return True

    def _requests(self, chunk: bytes) -> None:
        self.pending += chunk
        while b"\n" in self.pending:
            line, self.pending = self.pending.split(b"\n", 1)
            pid = os.fork()
            if pid == 0:
                _child(json.loads(line))
            self.reported.add(pid)
            print(f"started {pid}", flush=True)

    def _shell_request(self, connection: socket.socket) -> None:
        message, streams, _, _ = socket.recv_fds(connection, 1 << 20, 3)
        if not message:  # the shell's command ended before it was run
            connection.close()
            return
        assert self.listener is not None
        pid = os.fork()
        if pid == 0:
            _shell_child(json.loads(message), streams, self.listener, connection)
        for fd in streams:
            os.close(fd)
        self.shells[pid] = connection

    def _reap(self) -> None:
        for pid in [*self.reported, *self.shells]:
            done, status = os.waitpid(pid, os.WNOHANG)
            if not done:
                continue
            code = os.waitstatus_to_exitcode(status)
            if pid in self.reported:
                self.reported.discard(pid)
                print(f"ended {pid} {code}", flush=True)
            else:
                connection = self.shells.pop(pid)
                with contextlib.suppress(OSError):  # the shell may have gone
                    connection.send(str(code).encode())
                connection.close()


if __name__ == "__main__":
    _preload()
    _Server(sys.argv[1] if len(sys.argv) > 1 else None).serve()
