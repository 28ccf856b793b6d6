"""``support.answer_metrics``: the command run in the test's process gives what a subprocess
would (exit code, standard output and error), in the environment and folder it is given,
and leaves the test's process as it found it; a hang or leftover state fails the test."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest
from support import answer_metrics

import langchain_answer_metrics.cli.command as command


def test_output_exit_code_environment_and_folder_are_the_runs_own(tmp_path: Path) -> None:
    before_env, before_cwd = dict(os.environ), os.getcwd()
    before_streams = sys.stdout, sys.stderr
    result = answer_metrics(
        "evaluate",
        "missing.jsonl",
        "--metric",
        "semantic_similarity",
        env={"PATH": os.environ.get("PATH", ""), "ANSWER_METRICS_DEBUG": "1"},
        cwd=tmp_path,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    # The relative path was read in tmp_path, not in the test's folder.
    assert "missing.jsonl: no such file" in result.stderr
    assert result.args == [
        "answer-metrics",
        "evaluate",
        "missing.jsonl",
        "--metric",
        "semantic_similarity",
    ]
    assert dict(os.environ) == before_env and os.getcwd() == before_cwd
    assert (sys.stdout, sys.stderr) == before_streams


def test_the_run_sees_exactly_the_environment_it_is_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: dict[str, str] = {}

    def main(argv: list[str]) -> int:
        seen.update(os.environ)
        print("to stdout")
        print("Москва 北京 \x1b", file=sys.stderr)
        return 3

    monkeypatch.setenv("SHOULD_NOT_BE_SEEN", "1")
    monkeypatch.setattr(command, "main", main)
    result = answer_metrics("anything", env={"ONLY": "this"})
    assert seen == {"ONLY": "this"}
    assert os.environ["SHOULD_NOT_BE_SEEN"] == "1"
    assert (result.returncode, result.stdout, result.stderr) == (
        3,
        "to stdout\n",
        "Москва 北京 \x1b\n",
    )


def test_version_and_usage_errors_exit_like_the_command() -> None:
    version = answer_metrics("--version")
    assert version.returncode == 0 and version.stdout.startswith("answer-metrics ")
    typo = answer_metrics("evaluat")
    assert typo.returncode == 2 and "invalid choice: 'evaluat'" in typo.stderr


def test_the_runs_warnings_print_on_its_stderr_as_in_a_fresh_interpreter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def main(argv: list[str]) -> int:
        warnings.warn("a user warning", UserWarning, stacklevel=1)
        warnings.warn("a deprecation below __main__", DeprecationWarning, stacklevel=1)
        return 0

    monkeypatch.setattr(command, "main", main)
    for _ in range(2):  # shown on every run, not once per test process
        result = answer_metrics()
        assert "UserWarning: a user warning" in result.stderr
        assert "deprecation" not in result.stderr  # ignored, as python does by default


def test_a_hang_fails_the_test_with_every_threads_stack(monkeypatch: pytest.MonkeyPatch) -> None:
    def main(argv: list[str]) -> int:
        time.sleep(60)  # a blocking call: the watchdog's SIGINT cuts it short
        return 0

    monkeypatch.setattr(command, "main", main)
    started = time.monotonic()
    with pytest.raises(AssertionError, match=r"did not finish within 0.5 s(.|\n)*time.sleep"):
        answer_metrics("evaluate", timeout=0.5)
    assert time.monotonic() - started < 30


def test_a_signal_handler_left_behind_fails_and_is_restored(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = signal.getsignal(signal.SIGTERM)

    def main(argv: list[str]) -> int:
        signal.signal(signal.SIGTERM, lambda number, frame: None)
        return 0

    monkeypatch.setattr(command, "main", main)
    with pytest.raises(AssertionError, match="left behind: the handler of SIGTERM"):
        answer_metrics("evaluate")
    assert signal.getsignal(signal.SIGTERM) is before


def test_a_thread_left_running_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()

    def main(argv: list[str]) -> int:
        threading.Thread(target=release.wait, name="left-running").start()
        return 0

    monkeypatch.setattr(command, "main", main)
    monkeypatch.setattr("support._LEFTOVER_GRACE", 0.1)
    try:
        with pytest.raises(AssertionError, match="left behind: thread 'left-running'"):
            answer_metrics("evaluate")
    finally:
        release.set()


def test_the_keys_a_run_registers_for_redaction_are_forgotten_after(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from langchain_answer_metrics.core.redaction import redact, register_secret

    def main(argv: list[str]) -> int:
        register_secret("sec")  # a short test key, as a run with OPENAI_API_KEY=sec does
        print(redact("judge-sec"))
        return 0

    monkeypatch.setattr(command, "main", main)
    assert answer_metrics().stdout == "judge-<redacted>\n"
    assert redact("judge-sec") == "judge-sec"  # later tests read their own text
