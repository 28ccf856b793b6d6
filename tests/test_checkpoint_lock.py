"""One writer per checkpoint: the lock of the CLI's ``--out`` holds for the runner's
``checkpoint=`` too. A second run on the same checkpoint refuses at once, before any
request, naming the file and the first run's process; the lock a killed run left behind
is taken over by the next run, which resumes what the killed one saved."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from support import fact_judge

from langchain_answer_metrics import FactualCorrectness, evaluate_dataset, stream_evaluate
from langchain_answer_metrics.checkpoints.locks import OutputBusyError, lock_path
from langchain_answer_metrics.run.keeping import CheckpointBusyError

TESTS = Path(__file__).parent

SAMPLES = [
    {
        "response": f"Event {index} happened in {1800 + index}. It rained.",
        "reference": f"Event {index} happened in {1800 + index}.",
    }
    for index in range(8)
]

# A run in another process: its judge answers slowly, one request at a time, so it holds
# the checkpoint while this test tries it.
FIRST_RUN = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, sys.argv[1])
    from support import fact_judge
    from test_checkpoint_lock import SAMPLES
    from langchain_answer_metrics import FactualCorrectness, evaluate_dataset

    judge = fact_judge(latency=float(sys.argv[3]))
    evaluate_dataset(
        SAMPLES, [FactualCorrectness(llm=judge)], checkpoint=sys.argv[2], max_concurrency=1
    )
    """
)


def start_first_run(path: Path, latency: float) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", FIRST_RUN, str(TESTS), str(path), str(latency)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for(condition: object, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120
    while not condition():  # type: ignore[operator]
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "never happened"
        time.sleep(0.02)


def holder(path: Path) -> str:
    try:
        return lock_path(path).read_text().strip()
    except FileNotFoundError:
        return ""


def saved_ids(path: Path) -> list[str]:
    if not path.exists():
        return []
    return [json.loads(line)["id"] for line in path.read_text("utf-8").splitlines() if line]


@pytest.mark.slow
def test_a_second_run_refuses_at_once_and_a_killed_runs_lock_is_taken_over(
    tmp_path: Path,
) -> None:
    path = tmp_path / "run.jsonl"
    first = start_first_run(path, latency=0.3)
    try:
        wait_for(lambda: holder(path) == str(first.pid), first)
        wait_for(lambda: len(saved_ids(path)) >= 1, first)

        judge = fact_judge()
        with pytest.raises(CheckpointBusyError) as refused:
            evaluate_dataset(SAMPLES, [FactualCorrectness(llm=judge)], checkpoint=path)
        assert str(refused.value) == (
            f"checkpoint {path}: another run is writing it (process {first.pid}); wait for "
            "it to end, or pass another checkpoint"
        )
        assert isinstance(refused.value, OutputBusyError) and refused.value.pid == first.pid
        assert judge.calls == []  # refused before any request
        assert first.poll() is None  # the first run goes on

        first.send_signal(signal.SIGKILL)
        first.communicate(timeout=60)
    finally:
        if first.poll() is None:
            first.kill()
    done = saved_ids(path)
    assert 1 <= len(done) < len(SAMPLES)
    assert holder(path) == str(first.pid)  # left behind by the killed run

    judge = fact_judge()
    rows = evaluate_dataset(SAMPLES, [FactualCorrectness(llm=judge)], checkpoint=path)

    assert not any(row.errors for row in rows)
    prompts = " ".join(str(messages[-1].content) for _, messages in judge.calls)
    # A sample's id is its number, from 1: sample n was about the year 1800 + n - 1.
    assert all(str(1800 + int(number) - 1) not in prompts for number in done)  # resumed
    assert sorted(set(saved_ids(path)), key=int) == [str(n) for n in range(1, len(SAMPLES) + 1)]
    assert not lock_path(path).exists()  # the lock file goes with its run


def test_a_second_run_in_the_same_process_refuses_until_the_first_ends(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    stream = stream_evaluate(SAMPLES[:3], [FactualCorrectness(llm=fact_judge())], checkpoint=path)
    next(stream)  # the first run holds the checkpoint while it streams
    assert holder(path) == str(os.getpid())

    judge = fact_judge()
    with pytest.raises(CheckpointBusyError, match=rf"process {os.getpid()}"):
        evaluate_dataset(SAMPLES[:3], [FactualCorrectness(llm=judge)], checkpoint=path)
    assert judge.calls == []

    stream.close()  # ends the first run: its lock goes with it
    assert not lock_path(path).exists()
    rows = evaluate_dataset(SAMPLES[:3], [FactualCorrectness(llm=judge)], checkpoint=path)
    assert not any(row.errors for row in rows)
    assert sorted(set(saved_ids(path))) == ["1", "2", "3"]
