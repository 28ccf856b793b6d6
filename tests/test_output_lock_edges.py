"""The output lock's two less-trodden paths (lines the coverage of issue 32 found unrun):
a holder that has not written its process id yet, and a folder where the lock file
cannot be created, where the output file itself is locked instead."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

from langchain_answer_metrics.checkpoints import locks
from langchain_answer_metrics.checkpoints.locks import OutputBusyError, lock_path, output_lock


def test_a_holder_that_wrote_no_process_id_is_named_another_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "scores.jsonl"
    # The holder locked the lock file (an open file description of its own) and has not
    # written its process id: the second writer waits briefly for it, then says so.
    monkeypatch.setattr(locks, "_PID_WAIT_SECONDS", 0.05)
    held = os.open(lock_path(out), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        busy = pytest.raises(OutputBusyError, match="being written by another process")
        with busy as refused, output_lock(out):
            pytest.fail("the lock was taken twice")
        assert refused.value.pid is None and refused.value.path == out
    finally:
        os.close(held)
    with output_lock(out):  # once let go, the next writer takes it
        assert lock_path(out).read_text() == f"{os.getpid()}\n"
    assert not lock_path(out).exists()


def test_where_no_lock_file_can_be_made_the_output_itself_is_locked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "scores.jsonl"
    out.write_text('{"kept": 1}\n')
    refused = lock_path(out)
    real_open = os.open

    def no_lock_file(path: object, *args: object, **kwargs: object) -> int:
        # A folder we may write the output in but not create a file in (root here
        # bypasses permissions, so the refusal is the operating system's answer, faked).
        if Path(str(path)) == refused:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", no_lock_file)
    with output_lock(out):
        assert not refused.exists()
        refusal = pytest.raises(OutputBusyError, match="being written by another process")
        with refusal, output_lock(out):
            pytest.fail("the output was locked twice")
    with output_lock(out):  # let go: the next run locks it
        pass
    assert out.read_text() == '{"kept": 1}\n'  # locking appends nothing
