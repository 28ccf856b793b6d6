"""Long CLI runs keep what they did: a real SIGINT and a real SIGKILL against the local
server with latency, then a rerun that resumes (no timed asserts)."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest
from support import evaluate_args, evaluate_process
from test_cli import SAMPLES, cli, out_lines, write_jsonl

from langchain_answer_metrics.metrics.explain import counted
from langchain_answer_metrics.testing.faults import Fault
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer


def wait_for(condition: object, process: subprocess.Popen[str], limit: float = 300) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and process.poll() is None:
        if condition():  # type: ignore[operator]
            return
        time.sleep(0.02)


def saved_lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


@pytest.mark.slow  # a real signal to a real process
def test_sigint_half_way_keeps_the_first_samples(tmp_path: Path) -> None:
    # Many samples in flight at once: the earliest are finished first, so when half the
    # requests are done, samples have been saved (before: none until ~85 %).
    rows = [
        dict(
            SAMPLES[i % 4],
            id=f"s{i}",
            answer=f"{SAMPLES[i % 4]['answer']} ({i})",
            contexts=[f"{SAMPLES[i % 4]['contexts'][0]} ({i})"],
        )
        for i in range(40)
    ]  # all distinct: nothing shared across samples
    data = write_jsonl(tmp_path / "qa.jsonl", rows)
    out = tmp_path / "results.jsonl"
    with LocalOpenAIServer(latency=0.1) as server:
        # The count below is the scoring's (no preflight): 2 requests per sample.
        args = evaluate_args(data, out, server, max_concurrency=8, extra=["--no-preflight"])
        process = evaluate_process(data, out, server, max_concurrency=8, extra=["--no-preflight"])
        try:
            wait_for(lambda: server.chat_requests >= 40, process)  # half of 2 per sample
            process.send_signal(signal.SIGINT)
            _, stderr = process.communicate(timeout=300)
        finally:
            if process.poll() is None:
                process.kill()
        assert process.returncode == 130, stderr
        saved = out_lines(out)
        assert len(saved) >= 5, stderr
        assert [line["id"] for line in saved] == [f"s{i}" for i in range(len(saved))]

        server.latency = 0.0
        before = server.chat_requests
        result = cli(*args)
        assert result.returncode == 0, result.stderr
        assert f"resuming: {counted(len(saved), 'sample')} already scored" in result.stderr
        assert server.chat_requests - before == 2 * (40 - len(saved))


@pytest.mark.slow  # a real signal to a real process
def test_sigkill_then_a_torn_line_resumes(tmp_path: Path) -> None:
    rows = [
        dict(
            SAMPLES[3],
            id=f"zh{i}",
            answer=f"北京是中国的首都。{i}",
            contexts=[f"北京是中华人民共和国的首都。{i}"],
        )
        for i in range(30)
    ]
    data = write_jsonl(tmp_path / "qa.jsonl", rows)
    out = tmp_path / "results.jsonl"
    with LocalOpenAIServer(latency=0.1) as server:
        process = evaluate_process(data, out, server, max_concurrency=4)
        try:
            wait_for(lambda: saved_lines(out) >= 3, process)
            process.send_signal(signal.SIGKILL)
            process.communicate(timeout=300)
        finally:
            if process.poll() is None:
                process.kill()
        assert process.returncode == -signal.SIGKILL
        kept = out_lines(out)
        assert 3 <= len(kept) < 30
        # A kill in the middle of a write: the last line cut inside a Chinese character.
        data_bytes = out.read_bytes()
        last = data_bytes.rstrip(b"\n").rfind(b"\n") + 1
        cut = data_bytes.index("北".encode(), last) + 2
        out.write_bytes(data_bytes[:cut])

        server.latency = 0.0
        result = cli(*evaluate_args(data, out, server, max_concurrency=4))
        assert result.returncode == 0, result.stderr
        assert f"resuming: {counted(len(kept) - 1, 'sample')} already scored" in result.stderr
        assert "ignored 1 unreadable line" in result.stderr
        ids = set()
        for line in out.read_bytes().split(b"\n"):
            try:
                ids.add(json.loads(line.decode("utf-8"))["id"])
            except (UnicodeDecodeError, ValueError):
                continue
        assert ids == {f"zh{i}" for i in range(30)}


# --------------------------------------------------------------------------- small things


def test_version_and_metric_names_with_hyphens(tmp_path: Path) -> None:
    version = cli("--version")
    assert version.returncode == 0 and version.stdout.startswith("answer-metrics ")

    data = write_jsonl(tmp_path / "qa.jsonl", SAMPLES)
    typo = cli("evaluate", data, "--metric", "factual-corectness")
    assert typo.returncode == 2
    assert "did you mean factual_correctness?" in typo.stderr

    helped = cli("evaluate", "--help")
    assert "3 the run finished but some samples have metric errors" in " ".join(
        helped.stdout.split()
    )
    assert "--allow-errors" in helped.stdout and "--keep-degraded" in helped.stdout


def test_metric_errors_exit_3_unless_allowed(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "qa.jsonl", SAMPLES[:2])
    # A 400 is not retried: every request fails at once.
    with LocalOpenAIServer(faults=Fault(kind="500", status=400)) as server:
        args = [
            "evaluate",
            str(data),
            "--metric",
            "factual-correctness",
            "--base-url",
            server.base_url,
            "--model",
            "judge-a",
            "--quiet",
        ]
        failed = cli(*args)
        assert failed.returncode == 3, failed.stderr
        assert "samples with errors: 2 of 2; commonest (2):" in failed.stderr
        allowed = cli(*args, "--allow-errors")
        assert allowed.returncode == 0, allowed.stderr


def test_summary_json_for_ci(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "qa.jsonl", SAMPLES)
    summary_path = tmp_path / "summary.json"
    with LocalOpenAIServer() as server:
        result = cli(
            "evaluate",
            data,
            "--metric",
            "faithfulness",
            "--base-url",
            server.base_url,
            "--model",
            "judge-a",
            "--threshold",
            "0.5",
            "--quiet",
            "--summary-json",
            summary_path,
        )
        assert result.returncode == 0, result.stderr
        sent = server.chat_requests
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    entry = summary["metrics"]["faithfulness"]
    assert entry["scored"] == 4 and entry["error_count"] == 0
    assert {"mean", "ci_low", "ci_high", "pass_rate", "per_model"} <= set(entry)
    assert entry["pass_rate"] is not None
    assert summary["samples_with_errors"] == 0 and summary["exit_code"] == 0
    assert summary["usage"]["judge-a"]["requests"] == sent
