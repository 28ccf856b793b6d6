"""``calibrate`` scores into ``--out`` as ``evaluate`` does (cli/scoring.py): it never holds
every row or record of a run, writes each record as it arrives, so a run stopped or killed
half-way resumes sending only what is missing, and a finished one resumes with none."""

from __future__ import annotations

import html
import json
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support import answer_metrics, command_env
from test_cli import SAMPLES, write_jsonl
from test_cli_streaming import WINDOW, Alive, counted  # noqa: F401 (a fixture)
from warm_command import ForkedRun, WarmCommand

from langchain_answer_metrics.analysis.calibration import (
    Judged,
    MetricCalibration,
    calibration_of,
)
from langchain_answer_metrics.cli.records import read_records
from langchain_answer_metrics.judging.preflight import PREFLIGHT_ABOVE
from langchain_answer_metrics.metrics.explain import counted as counted_words
from langchain_answer_metrics.testing.faults import Fault
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer
from langchain_answer_metrics.testing.requests import RequestInfo

ROWS = 1500


def labelled_rows(path: Path, count: int, *, unlabelled_every: int = 0) -> Path:
    """``count`` rows with a pass/fail ``human`` label (every ``unlabelled_every``-th
    without one)."""
    with path.open("w", encoding="utf-8") as file:
        for number in range(count):
            row: dict[str, Any] = {
                "id": f"r{number}",
                "question": f"What is the capital of France? ({number})",
                "answer": "Paris." if number % 3 else f"Lyon, I think ({number}).",
                "ground_truth": "Paris is the capital of France.",
                "human": number % 3 != 0,
            }
            if unlabelled_every and number % unlabelled_every == unlabelled_every - 1:
                del row["human"]
            file.write(json.dumps(row) + "\n")
    return path


def similarity_args(server: LocalOpenAIServer, data: Path, folder: Path, *extra: str) -> list[str]:
    return [
        "calibrate",
        str(data),
        "--metric",
        "semantic_similarity",
        "--label-col",
        "human",
        "--base-url",
        server.base_url,
        "--embedding-model",
        "embed-a",
        "--threshold",
        "0.5",
        "--max-concurrency",
        "1",
        "--quiet",
        "--out",
        str(folder / "scores.jsonl"),
        "--json",
        str(folder / "calibration.json"),
        *extra,
    ]


def expected_calibration(out: Path, data: Path, key: str, threshold: float) -> MetricCalibration:
    """The calibration of the records in ``out``, held in memory at once (the labels from
    ``data``): what a streamed run must agree with."""
    records, unreadable = read_records(out)
    assert unreadable == 0
    items = []
    for line in data.read_text("utf-8").splitlines():
        row = json.loads(line)
        if "human" not in row:
            continue
        record = records[row["id"]]
        entry = record.metrics[key]
        items.append(
            Judged(
                id=record.id,
                label=row["human"],
                score=entry.score,
                not_applicable=entry.not_applicable is not None,
                per_model=entry.per_model,
                reason=entry.reason,
                claims=[f"{c.model}: [{c.verdict}] ({c.side}) {c.claim}" for c in entry.claims]
                + [f"{v.model}: {v.verdict} ({', '.join(map(str, v.votes))})" for v in entry.votes],
                response=record.response,
            )
        )
    return calibration_of(key, items, threshold=threshold)


@pytest.mark.slow  # thousands of rows through the command
def test_calibrate_never_holds_every_row_or_record(
    tmp_path: Path,
    server: LocalOpenAIServer,
    counted: tuple[Alive, Alive],  # noqa: F811
) -> None:
    rows, records = counted
    data = labelled_rows(tmp_path / "labelled.jsonl", ROWS, unlabelled_every=10)
    labelled = ROWS - ROWS // 10
    # A resumed run: the first 300 rows scored by an earlier run.
    part = labelled_rows(tmp_path / "part.jsonl", 300, unlabelled_every=10)
    assert answer_metrics(*similarity_args(server, part, tmp_path)).returncode == 0

    result = answer_metrics(*similarity_args(server, data, tmp_path))

    assert result.returncode == 0, result.stderr
    assert "resuming: 270 samples already scored" in result.stderr
    # Every row was read and every record made and read back, never more than a window's
    # worth at once (before: every labelled row, and every record, held to the end).
    assert rows.peak <= 2 * WINDOW, rows.peak
    assert records.peak <= 2 * WINDOW, records.peak
    assert rows.seen >= 3 * ROWS and records.seen >= 2 * labelled
    saved = [json.loads(line) for line in (tmp_path / "scores.jsonl").read_text().splitlines()]
    assert len(saved) == labelled and len({line["id"] for line in saved}) == labelled
    got = json.loads((tmp_path / "calibration.json").read_text("utf-8"))
    assert got["semantic_similarity"]["aggregate"]["n"]["value"] == labelled


# --------------------------------------------------------------------------- resuming


def fact_rows(count: int, *, labelled: bool = True) -> list[dict[str, Any]]:
    """``count`` distinct rows of the CLI's samples (nothing shared between them), each
    with a pass/fail ``human`` label unless not ``labelled``."""
    rows = []
    for number in range(count):
        sample = SAMPLES[number % len(SAMPLES)]
        row = dict(
            sample,
            id=f"s{number}",
            answer=f"{sample['answer']} ({number})",
            ground_truth=f"{sample['ground_truth']} ({number})",
            contexts=[f"{sample['contexts'][0]} ({number})"],
        )
        if labelled:
            row["human"] = number % 4 != 0
        rows.append(row)
    return rows


def panel_config(folder: Path, server: LocalOpenAIServer) -> Path:
    config = folder / "models.yaml"
    config.write_text(
        f"providers:\n  local:\n    base_url: {server.base_url}\n"
        "chat_models:\n  list:\n    - id: judge-a\n    - id: judge-b\n",
        "utf-8",
    )
    return config


def calibrate_args(data: Path, folder: Path, config: Path, *extra: str) -> list[str]:
    return [
        "calibrate",
        str(data),
        "--metric",
        "factual_correctness",
        "--label-col",
        "human",
        "--config",
        str(config),
        "--quiet",
        "--out",
        str(folder / "scores.jsonl"),
        "--json",
        str(folder / "calibration.json"),
        "--report",
        str(folder / "calibration.html"),
        *extra,
    ]


def test_a_partial_calibrate_resumes_only_what_is_missing(
    tmp_path: Path, server: LocalOpenAIServer
) -> None:
    config = panel_config(tmp_path, server)
    rows = fact_rows(16)
    rows[5].pop("human")  # unlabelled: left out, never scored
    data = write_jsonl(tmp_path / "labelled.jsonl", rows)
    # What scoring every labelled row costs, in one run (evaluate: no statistics).
    every_row = write_jsonl(tmp_path / "every.jsonl", [row for row in rows if "human" in row])
    fresh = ["evaluate", every_row, "--metric", "factual_correctness", "--config", config]
    fresh += ["--out", tmp_path / "fresh.jsonl", "--no-preflight", "--quiet"]
    assert answer_metrics(*fresh, env=command_env()).returncode == 0
    every_request = server.chat_requests

    # An earlier run scored the first 8 rows, then a kill cut a line short.
    server.reset()
    part = write_jsonl(tmp_path / "part.jsonl", rows[:8])
    assert (
        answer_metrics(*calibrate_args(part, tmp_path, config), env=command_env()).returncode == 0
    )
    with (tmp_path / "scores.jsonl").open("ab") as out:
        out.write('{"schema_version": 2, "id": "s8", "response": "caf\u00e9'.encode()[:-1])
    result = answer_metrics(*calibrate_args(data, tmp_path, config), env=command_env())

    assert result.returncode == 0, result.stderr
    assert "resuming: 7 samples already scored" in result.stderr
    assert "ignored 1 unreadable line" in result.stderr
    assert server.chat_requests == every_request  # the rest, and nothing twice
    records, unreadable = read_records(tmp_path / "scores.jsonl")
    assert unreadable == 0
    fresh_records = read_records(tmp_path / "fresh.jsonl")[0]
    assert {
        key: record.metrics["factual_correctness"].score for key, record in records.items()
    } == {key: record.metrics["factual_correctness"].score for key, record in fresh_records.items()}
    # The statistics streamed from --out are those of its records held at once.
    expected = expected_calibration(tmp_path / "scores.jsonl", data, "factual_correctness", 0.5)
    got = json.loads((tmp_path / "calibration.json").read_text("utf-8"))
    assert got == {"factual_correctness": expected.as_json()}
    page = (tmp_path / "calibration.html").read_text("utf-8")
    assert expected.disagreements
    for worst in expected.disagreements:
        assert f"{worst.id}: human {worst.label:.2f}, judges {worst.score:.2f}" in page
        assert html.escape(worst.response or "") in page
        assert worst.claims and all(html.escape(claim) in page for claim in worst.claims)

    # Finished: the same command resumes with nothing to send, and says the same.
    server.reset()
    again = answer_metrics(*calibrate_args(data, tmp_path, config), env=command_env())
    assert again.returncode == 0, again.stderr
    assert "resuming: 15 samples already scored" in again.stderr
    assert server.chat_requests == 0
    assert json.loads((tmp_path / "calibration.json").read_text("utf-8")) == got


def test_keep_degraded_keeps_a_score_a_judge_was_excluded_from(
    tmp_path: Path, server: LocalOpenAIServer
) -> None:
    config = panel_config(tmp_path, server)
    data = write_jsonl(tmp_path / "labelled.jsonl", fact_rows(5))

    def judge_b_fails_on_einstein(info: RequestInfo) -> Fault | None:
        text = json.dumps(info.messages, ensure_ascii=False)
        return (
            Fault(kind="500", status=400) if info.model == "judge-b" and "Spain" in text else None
        )

    server.faults = judge_b_fails_on_einstein
    first = answer_metrics(*calibrate_args(data, tmp_path, config), env=command_env())
    assert first.returncode == 0, first.stderr
    records, _ = read_records(tmp_path / "scores.jsonl")
    degraded = sorted(
        key for key, record in records.items() if record.metrics["factual_correctness"].excluded
    )
    assert degraded == ["s0", "s4"]  # judge-b was left out; judge-a scored them

    server.reset()
    kept = answer_metrics(
        *calibrate_args(data, tmp_path, config, "--keep-degraded"), env=command_env()
    )
    assert kept.returncode == 0, kept.stderr
    assert "resuming: 5 samples already scored" in kept.stderr and server.chat_requests == 0

    server.faults = None
    redone = answer_metrics(*calibrate_args(data, tmp_path, config), env=command_env())
    assert redone.returncode == 0, redone.stderr
    assert "resuming: 3 samples already scored" in redone.stderr
    records, _ = read_records(tmp_path / "scores.jsonl")
    assert not any(record.metrics["factual_correctness"].excluded for record in records.values())


def records_on_disk(path: Path) -> int:
    """The whole records in ``path`` (a line cut short by a kill is not one)."""
    whole = 0
    for line in path.read_bytes().splitlines() if path.exists() else ():
        try:
            whole += "id" in json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            continue
    return whole


def wait_for(condition: Callable[[], bool], run: ForkedRun) -> None:
    deadline = time.monotonic() + 120
    while not condition() and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)


@pytest.mark.slow  # a real SIGINT and a real SIGKILL to the command in a process
def test_an_interrupted_then_killed_calibrate_resumes_sending_only_the_rest(
    tmp_path: Path,
) -> None:
    data = write_jsonl(tmp_path / "labelled.jsonl", fact_rows(30))
    out = tmp_path / "scores.jsonl"
    with LocalOpenAIServer(latency=0.1) as server, WarmCommand(command_env()) as warm:
        # faithfulness: 2 requests a sample; no preflight, so only the samples' requests.
        args = ["calibrate", str(data), "--metric", "faithfulness", "--label-col", "human"]
        args += ["--base-url", server.base_url, "--model", "judge-a", "--out", str(out)]
        args += ["--max-concurrency", "4", "--no-preflight", "--quiet"]
        args += ["--json", str(tmp_path / "calibration.json")]

        interrupted = warm.start(args, tmp_path)
        wait_for(lambda: records_on_disk(out) >= 3, interrupted)
        interrupted.send_signal(signal.SIGINT)
        _, stderr = interrupted.communicate(timeout=300)
        assert interrupted.returncode == 130, stderr
        first = records_on_disk(out)
        assert 3 <= first < 30, stderr
        # What Ctrl-C kept is counted in the file.
        saved = f"interrupted: {counted_words(first, 'newly scored sample')} are saved in {out}"
        assert saved in stderr

        killed = warm.start(args, tmp_path)
        wait_for(lambda: records_on_disk(out) >= first + 3, killed)
        killed.kill()
        killed.communicate(timeout=300)
        assert killed.returncode != 0
        kept = records_on_disk(out)
        assert first + 3 <= kept < 30
        assert not (tmp_path / "calibration.json").exists()  # stopped before the statistics

        server.latency = 0.0
        before = server.chat_requests
        result = answer_metrics(*args, env=command_env())
        assert result.returncode == 0, result.stderr
        assert f"resuming: {counted_words(kept, 'sample')} already scored" in result.stderr
        assert server.chat_requests - before == 2 * (30 - kept)
    assert records_on_disk(out) == 30
    assert sorted(read_records(out)[0]) == sorted(f"s{number}" for number in range(30))
    statistics = json.loads((tmp_path / "calibration.json").read_text("utf-8"))
    assert statistics["faithfulness"]["aggregate"]["n"]["value"] == 30


def test_calibrate_checks_its_judges_before_a_large_run_within_its_limits(
    tmp_path: Path, server: LocalOpenAIServer
) -> None:
    count = PREFLIGHT_ABOVE + 2
    data = write_jsonl(tmp_path / "labelled.jsonl", fact_rows(count))
    out = tmp_path / "scores.jsonl"
    args = ["calibrate", str(data), "--metric", "faithfulness", "--label-col", "human"]
    args += ["--base-url", server.base_url, "--model", "judge-a", "--out", str(out), "--quiet"]

    server.faults = Fault(kind="500", status=404)  # a wrong model name
    refused = answer_metrics(*args, env=command_env())
    assert refused.returncode == 2, refused.stderr
    assert f"checked each judge with one request before scoring {count} samples" in refused.stderr
    assert "--no-preflight" in refused.stderr
    assert server.chat_requests == 1 and records_on_disk(out) == 0

    # The check is a request of the run: 1, then 4 samples of 2 requests, within 10.
    server.faults = None
    server.reset()
    stopped = answer_metrics(*args, "--max-requests", "10", env=command_env())
    assert stopped.returncode == 5, stopped.stderr
    assert server.chat_requests == 9 and records_on_disk(out) == 4
    # Resumed: 18 samples left, too few to check the judge again.
    server.reset()
    resumed = answer_metrics(*args, env=command_env())
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming: 4 samples already scored" in resumed.stderr
    assert server.chat_requests == 2 * (count - 4) and records_on_disk(out) == count
