"""A report or summary is written whole or not at all: after a full disk (a file-size limit
in the child process) the earlier file is left as it was, no temporary file is left
behind, and the command exits 2 naming the output it could not write."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from langchain_answer_metrics.checkpoints import write_atomically
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

EXIT_USAGE = 2


def limited_to(size: int) -> Callable[[], None]:
    """A preexec_fn: files may not grow past ``size`` bytes (a full disk, as the child
    sees it), and going past fails with EFBIG instead of killing the process."""

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    return limit


def run_cli(
    server: LocalOpenAIServer, tmp_path: Path, limit: int, *outputs: str, rows: int = 3
) -> subprocess.CompletedProcess[str]:
    data = tmp_path / "qa.jsonl"
    data.write_text(
        "".join(
            json.dumps({"id": f"s{n}", "answer": f"Paris {n}.", "ground_truth": "Paris."}) + "\n"
            for n in range(rows)
        ),
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LANGSMITH_"))}
    env.update(OPENAI_API_KEY="sk-test", LANGSMITH_TRACING="false", PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "langchain_answer_metrics.cli",
            "evaluate",
            str(data),
            "--metric",
            "semantic_similarity",
            "--base-url",
            server.base_url,
            "--embedding-model",
            "embed-a",
            "--quiet",
            *outputs,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        preexec_fn=limited_to(limit),
    )


def leftovers(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir() if path.name.endswith(".tmp"))


@pytest.mark.slow  # the command in a process, under a file-size limit
def test_a_report_cut_short_by_a_full_disk_leaves_the_old_one(
    tmp_path: Path, server: LocalOpenAIServer
) -> None:
    report = tmp_path / "report.html"
    report.write_text("<html>the earlier report</html>\n", encoding="utf-8")

    result = run_cli(server, tmp_path, 4096, "--report", str(report))

    assert result.returncode == EXIT_USAGE, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    expected = f"answer-metrics: error: --report {report}: cannot write it (File too large)"
    assert last.startswith(expected)
    assert report.read_text("utf-8") == "<html>the earlier report</html>\n"
    assert leftovers(tmp_path) == []


@pytest.mark.slow  # the command in a process, under a file-size limit
def test_a_summary_cut_short_leaves_the_old_one_or_none(
    tmp_path: Path, server: LocalOpenAIServer
) -> None:
    # One sample: its record (in the run's temporary file) fits under the limit, the
    # summary does not.
    summary = tmp_path / "summary.json"
    result = run_cli(server, tmp_path, 1200, "--summary-json", str(summary), rows=1)
    assert result.returncode == EXIT_USAGE, result.stderr
    assert "--summary-json" in result.stderr.strip().splitlines()[-1]
    assert "File too large" in result.stderr
    assert not summary.exists() and leftovers(tmp_path) == []

    summary.write_text('{"earlier": true}\n', encoding="utf-8")
    result = run_cli(server, tmp_path, 1200, "--summary-json", str(summary), rows=1)
    assert result.returncode == EXIT_USAGE, result.stderr
    assert json.loads(summary.read_text("utf-8")) == {"earlier": True}
    assert leftovers(tmp_path) == []

    # With room, the same command writes it whole.
    result = run_cli(server, tmp_path, 10**7, "--summary-json", str(summary), rows=1)
    assert result.returncode == 0, result.stderr
    assert json.loads(summary.read_text("utf-8"))["scored"] == 1


@pytest.mark.slow  # the command in a process, under a file-size limit
def test_a_full_disk_under_the_run_s_temporary_files_is_exit_2(
    tmp_path: Path, server: LocalOpenAIServer
) -> None:
    # Without --out, the records wait in a temporary file for the summary.
    result = run_cli(server, tmp_path, 700, rows=3)
    assert result.returncode == EXIT_USAGE, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("answer-metrics: error: cannot write a temporary file in ")
    assert "(File too large); free some space there or set TMPDIR" in last


def test_write_atomically_keeps_the_mode_and_cleans_up_on_error(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_text("old\n")
    path.chmod(0o640)

    def failing() -> object:
        yield "new, half"
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space"):
        write_atomically(path, failing())  # type: ignore[arg-type]
    assert path.read_text() == "old\n" and leftovers(tmp_path) == []
    write_atomically(path, ["new\n", b"bytes\n"])
    assert path.read_text() == "new\nbytes\n"
    assert path.stat().st_mode & 0o777 == 0o640
