"""The output lock's less-trodden paths (lines the coverage of issue 32 found unrun): a
holder that has not written its process id yet; a folder where the lock file cannot be
created, where the output file itself is locked instead; the two races of a writer that
opened the lock file just as its holder let go (the file gone, or already another
writer's); a lock the system refuses, or a Ctrl-C while locking, which leaves no
descriptor open; and a system without ``fcntl``, where there is no lock. Real processes
racing on one lock show that two writers never hold it at once."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import importlib.util
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest
from support import fact_judge

from langchain_answer_metrics import FactualCorrectness, evaluate_dataset
from langchain_answer_metrics.checkpoints import locks
from langchain_answer_metrics.checkpoints.locks import OutputBusyError, lock_path, output_lock
from langchain_answer_metrics.cli.options import UsageError
from langchain_answer_metrics.cli.out_lock import out_locked


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


# --------------------------------------------------------------------------- races


class FlockAfter:
    """The module ``fcntl`` as ``locks`` sees it, except that its next ``flock`` first
    runs ``before``: what another writer does between this writer's open of the lock file
    and its lock (a window of microseconds, held open here so the race is certain)."""

    LOCK_EX, LOCK_NB = fcntl.LOCK_EX, fcntl.LOCK_NB

    def __init__(self, before: Callable[[], None]) -> None:
        self.before: Callable[[], None] | None = before

    def flock(self, handle: int, operation: int) -> None:
        before, self.before = self.before, None
        if before is not None:
            before()
        fcntl.flock(handle, operation)


def is_held(where: Path) -> bool:
    """Whether someone holds the lock on the file now at ``where`` (tried on a new open)."""
    handle = os.open(where, os.O_RDWR)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(handle)
    return False


def test_a_writer_whose_lock_file_went_away_locks_the_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "scores.jsonl"
    with contextlib.ExitStack() as first:
        first.enter_context(output_lock(out))
        # The second writer has opened the first's lock file; the first ends (removes the
        # file, lets go) before the second locks it: the second's lock is on a removed
        # file no one else can see, so it must take the one on the path.
        monkeypatch.setattr(locks, "fcntl", FlockAfter(first.close))
        with output_lock(out):
            assert lock_path(out).read_text() == f"{os.getpid()}\n"
            assert is_held(lock_path(out))
            with pytest.raises(OutputBusyError), output_lock(out):  # a third is refused
                pytest.fail("the lock was taken twice")
    assert not lock_path(out).exists()


def test_a_writer_whose_lock_file_is_already_anothers_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "scores.jsonl"
    with contextlib.ExitStack() as first, contextlib.ExitStack() as third:
        first.enter_context(output_lock(out))
        replaced = lock_path(out).stat().st_ino

        def first_ends_and_a_third_locks() -> None:
            first.close()
            third.enter_context(output_lock(out))

        # The second writer locks the first's removed file; the lock file on the path is
        # the third's now, which holds it: the second is refused, not a second writer.
        monkeypatch.setattr(locks, "fcntl", FlockAfter(first_ends_and_a_third_locks))
        busy = pytest.raises(OutputBusyError, match=rf"being written by process {os.getpid()}")
        with busy, output_lock(out):
            pytest.fail("two writers hold the lock")
        assert lock_path(out).stat().st_ino != replaced
        assert is_held(lock_path(out))  # the third's lock is untouched
        assert lock_path(out).read_text() == f"{os.getpid()}\n"
    assert not lock_path(out).exists()


# Takes the lock on argv[1] argv[2] times, once told to go (a line on its input); while
# it holds it, creates and removes a file only one holder at a time can create.
RACER = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    from langchain_answer_metrics.checkpoints.locks import OutputBusyError, output_lock

    out, rounds = Path(sys.argv[1]), int(sys.argv[2])
    inside = out.with_name("inside")
    held = refused = 0
    print("ready", flush=True)
    sys.stdin.readline()
    for _ in range(rounds):
        try:
            with output_lock(out):
                os.close(os.open(inside, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
                os.unlink(inside)
                held += 1
        except OutputBusyError:
            refused += 1
    print(held, refused)
    """
)


@pytest.mark.slow  # interpreters started
def test_writers_racing_in_processes_never_hold_the_lock_at_once(tmp_path: Path) -> None:
    # Four processes take and let go of one lock as fast as they can: each race of an
    # open against a holder letting go happens many times (measured with coverage in the
    # processes: the file gone, and already another's, hundreds of times each). Were a
    # lock on a removed file kept, two would hold it at once and one's O_EXCL would fail.
    out, rounds = tmp_path / "scores.jsonl", 1500
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, str(out), str(rounds)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    try:
        for racer in racers:  # every interpreter started, then all go at once
            assert racer.stdout is not None
            assert racer.stdout.readline() == "ready\n", racer.communicate()
        counts = []
        for racer in racers:
            stdout, stderr = racer.communicate("go\n", timeout=300)
            assert racer.returncode == 0, stderr
            held, refused = map(int, stdout.split())
            assert held + refused == rounds  # held or refused, nothing else
            counts.append(held)
    finally:
        for racer in racers:
            if racer.poll() is None:
                racer.kill()
    # Someone holds it at every refusal; how often each did depends on the scheduler.
    assert sum(counts) > 0
    assert not lock_path(out).exists() and not (tmp_path / "inside").exists()


# --------------------------------------------------------------------------- refusals


def open_descriptors() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def refuse(error: BaseException) -> Callable[[], None]:
    def raise_it() -> None:
        raise error

    return raise_it


@pytest.mark.parametrize(
    "error",
    [
        # NFS without its lock daemon, or a kernel out of lock records.
        pytest.param(OSError(errno.ENOLCK, os.strerror(errno.ENOLCK)), id="no locks"),
        pytest.param(KeyboardInterrupt(), id="Ctrl-C"),
    ],
)
def test_a_lock_refused_by_the_system_leaves_no_descriptor_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: BaseException
) -> None:
    out = tmp_path / "scores.jsonl"
    before = open_descriptors()
    monkeypatch.setattr(locks, "fcntl", FlockAfter(refuse(error)))
    with pytest.raises(type(error)), output_lock(out):
        pytest.fail("locked without a lock")
    assert open_descriptors() == before
    monkeypatch.setattr(locks, "fcntl", fcntl)
    with output_lock(out):  # nothing left behind that stops the next run
        assert is_held(lock_path(out))


def test_the_command_and_the_runner_name_the_file_the_system_cannot_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "scores.jsonl"
    no_locks = OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))
    monkeypatch.setattr(locks, "fcntl", FlockAfter(refuse(no_locks)))
    with pytest.raises(UsageError) as refused, out_locked(out):
        pytest.fail("locked without a lock")
    assert str(refused.value) == f"--out {out}: cannot lock it (No locks available)"

    monkeypatch.setattr(locks, "fcntl", FlockAfter(refuse(no_locks)))
    judge = fact_judge()
    samples = [{"response": "Paris is in France.", "reference": "Paris is in France."}]
    with pytest.raises(OSError, match=rf"checkpoint {out}: cannot lock it \(No locks"):
        evaluate_dataset(samples, [FactualCorrectness(llm=judge)], checkpoint=out)
    assert judge.calls == []  # refused before any request


# --------------------------------------------------------------------------- no fcntl


def locks_without_fcntl(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """A fresh copy of the module, imported where ``import fcntl`` fails (Windows)."""
    monkeypatch.setitem(sys.modules, "fcntl", None)  # None: the import raises ImportError
    spec = importlib.util.spec_from_file_location("locks_without_fcntl", locks.__file__)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_without_fcntl_there_is_no_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = locks_without_fcntl(monkeypatch)
    assert copy.fcntl is None
    out = tmp_path / "scores.jsonl"
    out.write_text('{"kept": 1}\n')
    with copy.output_lock(out), copy.output_lock(out):  # both enter: nothing is locked
        assert not copy.lock_path(out).exists()
    assert out.read_text() == '{"kept": 1}\n'
    assert sorted(tmp_path.iterdir()) == [out]
