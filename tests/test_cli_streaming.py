"""The command streams: it never holds every row or every record of a run at once, and
what it writes is what an in-memory summary of the same records gives."""

from __future__ import annotations

import json
import re
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import langchain_answer_metrics.cli.datasets as cli_datasets
import langchain_answer_metrics.cli.resume as cli_resume
import langchain_answer_metrics.cli.streaming as cli_streaming
from langchain_answer_metrics.cli.command import main
from langchain_answer_metrics.cli.records import overview, read_records
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

ROWS = 1500
WINDOW = 256  # what the runner reads ahead for one embedding metric at concurrency 1


def write_rows(path: Path, count: int) -> Path:
    with path.open("w", encoding="utf-8") as file:
        for number in range(count):
            file.write(
                json.dumps(
                    {
                        "id": f"r{number}",
                        "question": f"q{number}?",
                        "answer": f"answer {number} about paris",
                        "ground_truth": "Paris is the capital.",
                    }
                )
                + "\n"
            )
    return path


class Alive:
    """Counts the objects of one kind alive at once (each watched by a finalizer)."""

    def __init__(self) -> None:
        self.alive = self.peak = self.seen = 0

    def add(self, item: Any) -> Any:
        if item is not None:
            self.alive += 1
            self.seen += 1
            self.peak = max(self.peak, self.alive)
            weakref.finalize(item, self._gone)
        return item

    def _gone(self) -> None:
        self.alive -= 1


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> tuple[Alive, Alive]:
    rows, records = Alive(), Alive()
    read_rows, make_record = cli_datasets.iter_rows, cli_streaming.sample_record
    read_record = cli_resume.as_record

    def counting_rows(*args: Any, **kwargs: Any) -> Iterator[Any]:
        for row in read_rows(*args, **kwargs):
            yield rows.add(row)

    monkeypatch.setattr(cli_datasets, "iter_rows", counting_rows)  # run_checks reads rows
    monkeypatch.setattr(
        cli_streaming, "sample_record", lambda *a, **k: records.add(make_record(*a, **k))
    )
    monkeypatch.setattr(cli_resume, "as_record", lambda value: records.add(read_record(value)))
    return rows, records


def evaluate(server: LocalOpenAIServer, data: Path, folder: Path, *extra: str) -> int:
    return main(
        [
            "evaluate",
            str(data),
            "--metric",
            "semantic_similarity",
            "--base-url",
            server.base_url,
            "--embedding-model",
            "embed-a",
            "--quiet",
            "--max-concurrency",
            "1",
            "--out",
            str(folder / "out.jsonl"),
            "--report",
            str(folder / "report.html"),
            "--summary-json",
            str(folder / "summary.json"),
            *extra,
        ]
    )


@pytest.mark.slow  # thousands of rows through the command
def test_the_command_never_holds_every_row_or_record(
    tmp_path: Path,
    server: LocalOpenAIServer,
    counted: tuple[Alive, Alive],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    rows, records = counted
    data = write_rows(tmp_path / "qa.jsonl", ROWS)

    assert evaluate(server, data, tmp_path) == 0

    # Every row was read (several times: check, plan, score, summarise) and every record
    # made and read back, but never more than a window's worth at once.
    assert rows.seen >= 3 * ROWS and records.seen >= 2 * ROWS
    assert rows.peak <= 2 * WINDOW, rows.peak
    assert records.peak <= 2 * WINDOW, records.peak
    saved = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text("utf-8").splitlines()]
    assert [line["id"] for line in saved] == [f"r{n}" for n in range(ROWS)]


def test_streamed_summary_and_report_match_the_records(
    tmp_path: Path,
    server: LocalOpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    data = write_rows(tmp_path / "qa.jsonl", 300)
    # A resumed run: the first 120 rows scored, then a line cut short by a kill.
    assert evaluate(server, write_rows(tmp_path / "part.jsonl", 120), tmp_path) == 0
    with (tmp_path / "out.jsonl").open("ab") as out:
        out.write('{"schema_version": 2, "id": "r120", "response": "caf\u00e9'.encode()[:-1])

    assert evaluate(server, data, tmp_path) == 0

    records, unreadable = read_records(tmp_path / "out.jsonl")
    assert unreadable == 0  # the torn line was dropped on resume
    ordered = [records[f"r{n}"] for n in range(300)]
    expected = overview(ordered, ["semantic_similarity"])[0].summary.model_dump()
    summary = json.loads((tmp_path / "summary.json").read_text("utf-8"))
    assert summary["samples"] == summary["scored"] == 300
    got = summary["metrics"]["semantic_similarity"]
    for name in ("mean", "ci_low", "ci_high", "scored", "error_count"):
        assert got[name] == pytest.approx(expected[name]), name
    page = (tmp_path / "report.html").read_text("utf-8")
    shown = re.findall(r'<section class="sample" id="s-\d+"><h3>#\d+ · (r\d+)</h3>', page)
    assert shown == [f"r{n}" for n in range(300)]  # every sample, in the dataset's order
    assert page.rstrip().endswith("</html>")
