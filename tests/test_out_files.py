"""Nothing of the user's is overwritten: an ``--out`` that holds anything but our records
is refused whatever its size, a symbolic link is written through and stays a link, and
only our own lines cut short by a kill are ever dropped (the same for the runner's
``checkpoint=`` file). Two runs never write one ``--out`` at once: the second refuses,
naming the first's process, and the lock of a killed run is taken over."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from support import evaluate_args, evaluate_process, fact_judge
from test_cli import SAMPLES, write_jsonl

from langchain_answer_metrics import Faithfulness, evaluate_dataset
from langchain_answer_metrics.checkpoints import write_atomically
from langchain_answer_metrics.checkpoints.locks import OutputBusyError, lock_path, output_lock
from langchain_answer_metrics.cli.command import main
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

EXIT_USAGE = 2


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("OPENAI_", "LANGSMITH_", "ANSWER_METRICS_")):
            monkeypatch.delenv(name)


def evaluate(
    tmp_path: Path, server: LocalOpenAIServer, out: Path, *extra: str, rows: int = 2
) -> int:
    data = write_jsonl(tmp_path / "qa.jsonl", SAMPLES[:rows])
    return main(evaluate_args(data, out, server, extra=extra))


def records_in(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


# --------------------------------------------------------------------------- not ours


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(b"my notes, one line\n", id="one line of text"),
        pytest.param(b"no newline at the end", id="one line, unended"),
        pytest.param(b'{"id": "a", "question": "q", "answer": "a"}\n', id="one dataset row"),
        pytest.param(random.Random(7).randbytes(3_000_000), id="3 MB blob"),
        pytest.param(b"x" * 3_000_000, id="3 MB single line"),
        pytest.param(b"a\nb\nc\n" * 1000, id="3000 lines"),
    ],
)
def test_a_file_holding_no_records_is_refused_and_left_as_it_is(
    tmp_path: Path, server: LocalOpenAIServer, content: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "precious.txt"
    out.write_bytes(content)
    assert evaluate(tmp_path, server, out) == EXIT_USAGE
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith(f"answer-metrics: error: --out {out}: holds no answer-metrics results")
    assert "left as it is" in error
    assert out.read_bytes() == content
    assert server.chat_requests == 0  # refused before any request


def test_records_with_a_foreign_line_are_refused_naming_the_line(
    tmp_path: Path, server: LocalOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "results.jsonl"
    assert evaluate(tmp_path, server, out) == 0
    lines = out.read_text("utf-8").splitlines(keepends=True)
    content = (lines[0] + "a note the user added\n" + lines[1]).encode()
    out.write_bytes(content)
    assert evaluate(tmp_path, server, out, rows=3) == EXIT_USAGE
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert "line 2 is not an answer-metrics result (1 such line)" in error
    assert out.read_bytes() == content


def test_an_empty_file_and_our_own_torn_line_are_ours(
    tmp_path: Path, server: LocalOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "results.jsonl"
    out.write_bytes(b"")
    assert evaluate(tmp_path, server, out) == 0
    first = out.read_text("utf-8").splitlines(keepends=True)
    # A kill cut the first record short: the file holds no record, but it is ours.
    out.write_text(first[0][:60], "utf-8")
    assert evaluate(tmp_path, server, out) == 0, capsys.readouterr().err
    assert "ignored 1 unreadable line" in capsys.readouterr().err
    assert [line["id"] for line in records_in(out)] == ["en-1", "en-2"]


# --------------------------------------------------------------------------- symbolic links


def test_out_through_a_symbolic_link_updates_the_target(
    tmp_path: Path, server: LocalOpenAIServer
) -> None:
    (tmp_path / "store").mkdir()
    target = tmp_path / "store" / "results.jsonl"
    link = tmp_path / "results.jsonl"
    link.symlink_to(target)
    assert evaluate(tmp_path, server, link) == 0
    assert link.is_symlink() and target.is_file() and not target.is_symlink()
    assert len(records_in(target)) == 2

    # A torn line makes the resume rewrite the file (atomically): still through the link.
    target.write_text(target.read_text("utf-8") + '{"schema_version": 2, "id": "ru', "utf-8")
    assert evaluate(tmp_path, server, link, rows=3) == 0
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert [line["id"] for line in records_in(target)] == ["en-1", "en-2", "ru-1"]


def test_report_and_summary_through_links_stay_links(
    tmp_path: Path, server: LocalOpenAIServer
) -> None:
    (tmp_path / "site").mkdir()
    links = {}
    for flag, name in (("--report", "report.html"), ("--summary-json", "summary.json")):
        target = tmp_path / "site" / name
        target.write_text("the earlier one", "utf-8")
        target.chmod(0o640)
        links[flag] = (tmp_path / name, target)
        (tmp_path / name).symlink_to(target)
    extra = [part for flag, (link, _) in links.items() for part in (flag, str(link))]
    assert evaluate(tmp_path, server, tmp_path / "out.jsonl", *extra) == 0
    for link, target in links.values():
        assert link.is_symlink() and link.resolve() == target
        assert target.read_text("utf-8") != "the earlier one"
        assert target.stat().st_mode & 0o777 == 0o640
    assert json.loads(links["--summary-json"][1].read_text("utf-8"))["exit_code"] == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["out.jsonl", "qa.jsonl", "report.html", "site", "summary.json"]
    )


def test_write_atomically_through_a_chain_of_links(tmp_path: Path) -> None:
    target = tmp_path / "real.txt"
    target.write_text("old", "utf-8")
    (tmp_path / "middle").symlink_to(target)
    (tmp_path / "outer").symlink_to(tmp_path / "middle")
    write_atomically(tmp_path / "outer", ["new"])
    assert (tmp_path / "outer").is_symlink() and (tmp_path / "middle").is_symlink()
    assert target.read_text("utf-8") == "new"
    # A loop of links is an error, not a file written in its place.
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(OSError, match="symbolic links"):
        write_atomically(tmp_path / "a", ["x"])
    assert (tmp_path / "a").is_symlink()


# --------------------------------------------------------------------------- checkpoint=


def test_a_checkpoint_path_that_is_not_a_checkpoint_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "qa.jsonl"
    content = b'{"id": "a", "question": "q"}\nnot json\n'
    path.write_bytes(content)
    judge = fact_judge()
    with pytest.raises(ValueError, match=r"qa.jsonl: line 1 is not a checkpoint line"):
        evaluate_dataset(CHECKPOINT_SAMPLES, [Faithfulness(llm=judge)], checkpoint=path)
    assert path.read_bytes() == content and judge.calls == []

    # Its own torn last line is dropped when it appends, nothing else.
    own = tmp_path / "run.jsonl"
    evaluate_dataset(CHECKPOINT_SAMPLES[:1], [Faithfulness(llm=fact_judge())], checkpoint=own)
    own.write_text(own.read_text("utf-8") + '{"schema_version": 2, "id": "2", "fin', "utf-8")
    evaluate_dataset(CHECKPOINT_SAMPLES, [Faithfulness(llm=fact_judge())], checkpoint=own)
    assert [json.loads(line)["id"] for line in own.read_text("utf-8").splitlines()] == ["1", "2"]


CHECKPOINT_SAMPLES = [
    {"response": "Paris is in France.", "retrieved_contexts": ["Paris is in France."]},
    {"response": "Rome is in Italy.", "retrieved_contexts": ["Rome is in Italy."]},
]


# --------------------------------------------------------------------------- one writer


def wait_until(condition: Callable[[], bool], process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 300
    while not condition():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "never happened"
        time.sleep(0.02)


def holds_lock(out: Path, process: subprocess.Popen[str]) -> Callable[[], bool]:
    def check() -> bool:
        try:
            return lock_path(out).read_text().strip() == str(process.pid)
        except FileNotFoundError:
            return False

    return check


def many_rows(tmp_path: Path, count: int = 30) -> Path:
    rows = [
        dict(SAMPLES[n % 4], id=f"s{n}", answer=f"{SAMPLES[n % 4]['answer']} ({n})")
        for n in range(count)
    ]
    return write_jsonl(tmp_path / "qa.jsonl", rows)


@pytest.mark.slow  # the command in processes, one killed
def test_a_second_run_on_the_same_out_refuses_at_once(
    tmp_path: Path, server: LocalOpenAIServer
) -> None:
    data, out = many_rows(tmp_path), tmp_path / "results.jsonl"
    # The first run's requests are held (after its first samples) until the test lets go,
    # so it is surely still running while the second one tries.
    release = threading.Event()

    def hold(info: object) -> None:
        if server.chat_requests > 6:
            release.wait(120)

    server.faults = hold
    first = evaluate_process(data, out, server, max_concurrency=1)
    try:
        wait_until(holds_lock(out, first), first)
        wait_until(lambda: out.exists() and out.stat().st_size > 0, first)
        # A second run, through a link to the same file: refused while the first runs.
        link = tmp_path / "link.jsonl"
        link.symlink_to(out)
        for path in (out, link):
            second = evaluate_process(data, path, server, max_concurrency=1)
            _, stderr = second.communicate(timeout=300)
            assert second.returncode == EXIT_USAGE, stderr
            assert first.poll() is None  # the first is still running
            assert stderr.strip().splitlines()[-1] == (
                f"answer-metrics: error: --out {path}: another answer-metrics run is writing "
                f"it (process {first.pid}); wait for it to end, or choose another --out"
            )
        release.set()
        _, stderr = first.communicate(timeout=300)
    finally:
        release.set()
        if first.poll() is None:
            first.kill()
    assert first.returncode == 0, stderr
    ids = [line["id"] for line in records_in(out)]
    assert ids == [f"s{n}" for n in range(30)]  # each sample once, by the first run only
    assert not lock_path(out).exists()  # the lock file goes with its run


@pytest.mark.slow  # the command in processes, one killed
def test_the_lock_of_a_killed_run_is_taken_over(tmp_path: Path, server: LocalOpenAIServer) -> None:
    data, out = many_rows(tmp_path), tmp_path / "results.jsonl"
    server.latency = 0.05
    killed = evaluate_process(data, out, server, max_concurrency=1)
    try:
        wait_until(holds_lock(out, killed), killed)
        wait_until(
            lambda: len(out.read_bytes().splitlines()) >= 2 if out.exists() else False, killed
        )
        killed.send_signal(signal.SIGKILL)
        killed.communicate(timeout=300)
    finally:
        if killed.poll() is None:
            killed.kill()
    assert lock_path(out).read_text().strip() == str(killed.pid)  # left behind
    server.latency = 0.0
    rerun = evaluate_process(data, out, server, max_concurrency=1)
    _, stderr = rerun.communicate(timeout=300)
    assert rerun.returncode == 0, stderr
    assert "resuming:" in stderr
    assert sorted({line["id"] for line in records_in(out)}) == sorted(f"s{n}" for n in range(30))
    assert not lock_path(out).exists()


def test_the_lock_in_one_process(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    with output_lock(out):
        assert lock_path(out).read_text() == f"{os.getpid()}\n"
        # flock locks belong to an open file: a second open, even here, is refused.
        busy = pytest.raises(OutputBusyError, match=rf"being written by process {os.getpid()}")
        with busy, output_lock(out):
            pass
    assert not lock_path(out).exists()
    with output_lock(Path("/dev/null")):  # not a regular file: nothing to lock
        pass
