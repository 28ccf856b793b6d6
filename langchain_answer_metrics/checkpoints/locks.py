"""One writer per output file: a run holds a lock on the file it appends to, so a second
run on the same file refuses at once instead of scoring every sample twice into it.

    >>> with output_lock(Path("results.jsonl")):
    ...     ...  # another run on results.jsonl raises OutputBusyError, naming this process

The lock is an ``fcntl.flock`` on a small file beside the output (``.results.jsonl.lock``,
holding the writer's process id), not on the output itself: the output is replaced
whole when a line cut short is dropped, and a lock on the replaced file would be lost.
The kernel releases the lock when its process ends, however it ends, so the lock of a
run that was killed is taken over by the next run; the lock file is removed when the
run ends. Links are followed: two links to one file share its lock. Where ``fcntl`` is
missing (Windows), there is no lock.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

from langchain_answer_metrics.checkpoints import link_target

try:
    import fcntl
except ImportError:  # not a POSIX system: no lock
    fcntl = None  # type: ignore[assignment]

__all__ = ["OutputBusyError", "lock_path", "output_lock"]

# How long to wait for the holder's process id, which it writes just after locking.
_PID_WAIT_SECONDS = 0.5


class OutputBusyError(RuntimeError):
    """Another process holds the lock on the output file."""

    def __init__(self, path: Path, pid: int | None) -> None:
        self.path = path
        self.pid = pid
        holder = f"process {pid}" if pid is not None else "another process"
        super().__init__(f"{path} is being written by {holder}")


def lock_path(path: Path) -> Path:
    """Where the lock of output ``path`` is kept: beside the file ``path`` points at."""
    target = link_target(path)
    return target.with_name(f".{target.name}.lock")


@contextlib.contextmanager
def output_lock(path: Path) -> Iterator[None]:
    """Hold the lock on output ``path`` for the duration of the block.

    Raises:
        OutputBusyError: another process holds it (its process id, when known).

    A path that is not a regular file (``/dev/stdout``, a pipe) or whose folder does not
    exist is not locked: nothing is appended to it, or the run refuses it anyway.
    """
    target = link_target(path)
    if fcntl is None or (target.exists() and not target.is_file()) or not target.parent.is_dir():
        yield
        return
    where = lock_path(path)
    try:
        handle = _locked(where, path)
    except PermissionError:  # a folder we may not create in: lock the output itself
        with _locked_output(target, path):
            yield
        return
    try:
        os.ftruncate(handle, 0)
        os.write(handle, f"{os.getpid()}\n".encode())
        yield
    finally:
        # Removed while still held, so no one can lock the old file after we let go.
        with contextlib.suppress(OSError):
            os.unlink(where)
        os.close(handle)


def _locked(where: Path, path: Path) -> int:
    """A descriptor of the lock file ``where``, locked (another run's lock raises)."""
    while True:
        handle = os.open(where, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _holder(handle)
            os.close(handle)
            raise OutputBusyError(path, pid) from None
        except BaseException:
            os.close(handle)
            raise
        # The holder before us may have removed the file between our open and our lock:
        # then we hold a lock no one else can see. Take the one on the path now.
        try:
            current = os.stat(where).st_ino
        except FileNotFoundError:
            current = None
        if current == os.fstat(handle).st_ino:
            return handle
        os.close(handle)


@contextlib.contextmanager
def _locked_output(target: Path, path: Path) -> Iterator[None]:
    handle = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise OutputBusyError(path, None) from None
        yield
    finally:
        os.close(handle)


def _holder(handle: int) -> int | None:
    """The process id the lock's holder wrote (it writes it just after locking)."""
    deadline = time.monotonic() + _PID_WAIT_SECONDS
    while True:
        os.lseek(handle, 0, os.SEEK_SET)
        text = os.read(handle, 64).decode("ascii", "replace").strip()
        if text.isdigit():
            return int(text)
        if time.monotonic() > deadline:
            return None
        time.sleep(0.01)
