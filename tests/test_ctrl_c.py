"""Ctrl-C is never lost and never tears a line: the command's SIGINT handler stops a run
at a safe point, keeps what is saved, says how many records it appended (counted in the
file) and exits 130, wherever the signal lands: while the command starts, mid-run, while
a record is being written, or as the process ends.

Python's own handler raised KeyboardInterrupt wherever the main thread was; inside a
weakref callback it was printed and dropped, and the run exited 0.
"""

from __future__ import annotations

import json
import random
import re
import signal
import subprocess
import time
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from support import command_env, evaluate_args, evaluate_process
from test_cli import SAMPLES, write_jsonl
from warm_command import ForkedRun, WarmCommand

import langchain_answer_metrics.cli.resume as cli_resume
from langchain_answer_metrics.cli.command import main
from langchain_answer_metrics.cli.interrupts import CTRL_C
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

EXIT_INTERRUPTED = 130
SAVED = re.compile(r"interrupted: (\d+) newly scored samples? (?:is|are) saved in ")


def rows(count: int) -> list[dict[str, Any]]:
    return [
        dict(SAMPLES[n % 4], id=f"s{n}", answer=f"{SAMPLES[n % 4]['answer']} ({n})")
        for n in range(count)
    ]


RUN_ROWS = 16

Process = subprocess.Popen[str] | ForkedRun


def records_on_disk(out: Path) -> int:
    """Whole lines in ``out`` so far (no check: the run may be writing)."""
    return out.read_bytes().count(b"\n") if out.exists() else 0


def check_lines(out: Path) -> int:
    """The records in ``out``: every line whole (ended, JSON); none if there is no file."""
    if not out.exists():
        return 0
    content = out.read_bytes()
    assert not content or content.endswith(b"\n"), f"a torn last line: {content[-80:]!r}"
    lines = content.splitlines()
    for line in lines:
        assert json.loads(line)["schema_version"] == 2
    return len(lines)


# --------------------------------------------------------------------------- in one process


def test_the_saved_count_is_what_the_file_holds(
    tmp_path: Path,
    server: LocalOpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Ctrl-C right after the third record reached the file, before the run counted it:
    # the message used to say 2 while the file held 3.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    append = cli_resume.RecordStore.append
    seen = []

    def append_then_interrupt(self: Any, record: Any) -> None:
        append(self, record)
        seen.append(record.id)
        if len(seen) == 3:
            raise KeyboardInterrupt

    monkeypatch.setattr(cli_resume.RecordStore, "append", append_then_interrupt)
    data, out = write_jsonl(tmp_path / "qa.jsonl", rows(8)), tmp_path / "out.jsonl"
    code = main(evaluate_args(data, out, server, max_concurrency=1))
    assert code == EXIT_INTERRUPTED
    err = capsys.readouterr().err
    assert check_lines(out) == 3
    assert "interrupted: 3 newly scored samples are saved in" in err, err


def test_a_ctrl_c_swallowed_by_a_weakref_callback_still_stops_the_run(
    tmp_path: Path, server: LocalOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The interrupt lands inside a weakref callback, where Python drops any exception:
    # the run must still stop, and exit 130, not 0.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    append = cli_resume.RecordStore.append
    fired = []

    class Doomed:
        pass

    def append_then_signal(self: Any, record: Any) -> None:
        append(self, record)
        if not fired:
            fired.append(True)
            doomed = Doomed()
            watch = weakref.ref(doomed, lambda _: signal.raise_signal(signal.SIGINT))
            del doomed  # the callback runs now, and the signal is handled inside it
            assert watch() is None

    monkeypatch.setattr(cli_resume.RecordStore, "append", append_then_signal)
    data, out = write_jsonl(tmp_path / "qa.jsonl", rows(6)), tmp_path / "out.jsonl"
    code = main(evaluate_args(data, out, server, max_concurrency=1))
    assert code == EXIT_INTERRUPTED
    assert 1 <= check_lines(out) < 6
    assert not CTRL_C.requested or CTRL_C._installs == 0  # the handler was put back
    assert signal.getsignal(signal.SIGINT) is not CTRL_C._handle


# --------------------------------------------------------------------------- 50 real interrupts


def command_starting(pid: int) -> bool:
    """Whether the command's own code runs: it loads pydantic's compiled core, which
    nothing before its Ctrl-C handler loads. (Before that, Python imports its site
    packages and their ``.pth`` hooks: a Ctrl-C there stops any Python program the way
    Python does, before a line of ours has run.)"""
    try:
        return "_pydantic_core" in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


def wait(condition: Callable[[], bool], process: Process) -> bool:
    """Wait for ``condition``; False if the process ended first."""
    deadline = time.monotonic() + 120
    while not condition():
        if process.poll() is not None or time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


def one_interrupt(
    moment: str, seed: int, data: Path, server: LocalOpenAIServer, warm: WarmCommand
) -> tuple[str, int | None, str, int]:
    """One run interrupted at a random ``moment``: (moment, exit code, stderr, records);
    the exit code is None when the run ended before the signal could be sent.

    At start-up the signal may land in the imports: the run is a new interpreter. Mid-run
    and while writing, the run has long finished importing: it is forked from ``warm``,
    which has imported the command once (each new interpreter costs 2 to 3 CPU seconds
    of imports, most of such a run), and runs the same code from ``console()`` on."""
    folder = data.parent
    rng = random.Random(seed)
    out = folder / f"out-{seed}.jsonl"
    if moment == "start-up":  # the signal may land in the imports: a new interpreter
        process: Process = evaluate_process(data, out, server, max_concurrency=2)
    else:
        process = warm.start(evaluate_args(data, out, server, max_concurrency=2), folder)
    try:
        ready = wait(lambda: command_starting(process.pid), process)
        if ready and moment == "start-up":  # imports, the dataset, the models
            time.sleep(rng.uniform(0.0, 2.0))
        elif ready and moment == "mid-run":
            ready = wait(out.exists, process)
            time.sleep(rng.uniform(0.0, 0.8))
        elif ready and moment == "writing":  # as the k-th record reaches the file
            k = rng.randint(1, 8)
            ready = wait(lambda: out.exists() and out.read_bytes().count(b"\n") >= k, process)
        # Once every record is on disk the run may be ending: a signal then can land in
        # the process's teardown, after its exit decision, where no handler runs (seen 1
        # in 50 as an exit 0 with everything written). Such a run is not counted.
        sent = ready and process.poll() is None and records_on_disk(out) < RUN_ROWS
        if sent:
            process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
    return moment, process.returncode if sent else None, stderr, check_lines(out)


@pytest.mark.slow
def test_fifty_interrupts_at_random_moments_all_exit_130(
    tmp_path: Path, server: LocalOpenAIServer
) -> None:
    server.latency = 0.01
    data = write_jsonl(tmp_path / "qa.jsonl", rows(RUN_ROWS))
    moments = ["start-up", "mid-run", "writing"]
    results: list[tuple[str, int | None, str, int]] = []
    attempt = 0
    with ThreadPoolExecutor(max_workers=3) as pool, WarmCommand(command_env()) as warm:
        while len(results) < 50 and attempt < 80:
            batch = [
                pool.submit(one_interrupt, moments[number % 3], number, data, server, warm)
                for number in range(attempt, attempt + 3)
            ]
            attempt += 3
            # A run that ended before its signal was sent did not get one: not counted.
            results += [r for r in (job.result() for job in batch) if r[1] is not None]
    assert len(results) >= 50, f"only {len(results)} runs were interrupted"
    wrong = [
        (moment, code, stderr[-600:])
        for moment, code, stderr, _ in results
        if code != EXIT_INTERRUPTED or "Traceback" in stderr or "Exception ignored" in stderr
    ]
    assert wrong == [], f"{len(wrong)} of {len(results)}: {wrong}"
    for moment, _, stderr, records in results:
        said = SAVED.search(stderr)
        if said is not None:  # the count it gives is what the file holds
            assert int(said[1]) == records, (moment, stderr[-400:])
    kinds = {moment for moment, *_ in results}
    assert kinds == set(moments)
    # Some runs were stopped with records saved, some before any.
    assert any(records for *_, records in results)
    assert any(not records for *_, records in results)
