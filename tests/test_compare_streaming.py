"""``compare`` reads its two ``--out`` files a record at a time (cli/run_on_disk.py): it
never holds every record of a run, whatever the files' length, and says what the library's
``compare`` of the records held in memory says, to the byte."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support import answer_metrics
from test_cli_streaming import Alive

import langchain_answer_metrics.run.records.reading as reading
from langchain_answer_metrics.analysis.comparison import TOLERANCE, compare, sign_flip_p_value
from langchain_answer_metrics.cli.output.comparison import print_comparison
from langchain_answer_metrics.cli.records import read_records

ROWS = 3000


def entry(score: float | None, *, reason: str, error: bool = False) -> dict[str, Any]:
    return {
        "kind": None if error else "faithfulness",
        "score": score,
        "reason": reason,
        "error": {"type": "TimeoutError", "message": "the judge timed out"} if error else None,
    }


def write_run(path: Path, count: int, *, seed: int, torn: bool = False) -> Path:
    """An ``--out`` file of ``count`` samples with two metrics (some failed, some ids
    written twice: the last line wins), and a line cut short at the end if ``torn``."""
    rng = random.Random(seed)
    lines = []
    for number in range(count):
        metrics = {
            "faithfulness": entry(
                None if number % 97 == 5 else rng.choice((0.0, 0.5, 1.0)),
                reason=f"faithfulness of s{number}: {rng.random()}",
                error=number % 97 == 5,
            ),
            "has_year": entry(rng.random(), reason=f"year of s{number}"),
        }
        line = {
            "schema_version": 2,
            "id": f"s{number}",
            "fingerprint": f"{number:016x}",
            "user_input": f"Question {number}?",
            "response": f"Answer {number}: {rng.random()}",
            "reference": None,
            "retrieved_contexts": None,
            "metrics": metrics,
        }
        lines.append(json.dumps(line, ensure_ascii=False))
        if number % 50 == 7:  # rescored later: a second line for the id
            line["metrics"]["faithfulness"] = entry(1.0, reason=f"rescored s{number}")
            lines.append(json.dumps(line, ensure_ascii=False))
    text = "\n".join(lines) + "\n"
    if torn:
        text += '{"schema_version": 2, "id": "s'
    path.write_text(text, "utf-8")
    return path


@pytest.fixture
def records_read(monkeypatch: pytest.MonkeyPatch) -> Alive:
    """Every record ``compare`` reads from its files, counted while alive."""
    alive, read = Alive(), reading.as_record
    # Both where the file is indexed (record_lines) and where a record is read again by
    # id (record_on_line) read it through reading.as_record.
    monkeypatch.setattr(reading, "as_record", lambda value: alive.add(read(value)))
    return alive


def in_memory(baseline: Path, candidate: Path) -> tuple[str, str]:
    """What ``compare`` printed and wrote before it streamed: the library's comparison of
    every record of both files, held at once."""
    result = compare(
        list(read_records(baseline)[0].values()), list(read_records(candidate)[0].values())
    )
    printed = io.StringIO()
    print_comparison(result, {"faithfulness": 0.05}, printed)
    return printed.getvalue(), json.dumps(result.as_json(), indent=2, ensure_ascii=False) + "\n"


@pytest.mark.slow  # thousands of records through the command
def test_compare_never_holds_every_record(tmp_path: Path, records_read: Alive) -> None:
    baseline = write_run(tmp_path / "baseline.jsonl", ROWS, seed=1)
    candidate = write_run(tmp_path / "candidate.jsonl", ROWS + 40, seed=2, torn=True)

    result = answer_metrics(
        "compare",
        baseline,
        candidate,
        "--json",
        tmp_path / "diff.json",
        "--report",
        tmp_path / "diff.html",
        "--fail-on-regression",
        "faithfulness=0.05",
    )

    assert result.returncode == 0, result.stderr
    # Every record was read (each file indexed, each record read again to be compared, the
    # most regressed once more), never more than a few at once (before: both files whole).
    assert records_read.seen >= 4 * ROWS, records_read.seen
    assert records_read.peak <= 4, records_read.peak
    assert f"{candidate}: ignored 1 unreadable line" in result.stderr
    printed, written = in_memory(baseline, candidate)
    assert result.stdout == printed
    assert (tmp_path / "diff.json").read_text("utf-8") == written
    statistics = json.loads(written)["faithfulness"]
    # Ids s3000..s3039 are the candidate's only; s5, s102, ... failed in both runs, but
    # for the one rescored in a later line (the last line of an id wins).
    failed = [n for n in range(5, ROWS, 97) if n % 50 != 7]
    assert len(failed) == len(range(5, ROWS, 97)) - 1
    assert statistics["unpaired"] == 40 and statistics["errors"] == len(failed)
    assert statistics["n_paired"] == ROWS - statistics["errors"]


def test_compare_of_small_files_is_the_librarys_to_the_byte(
    tmp_path: Path, records_read: Alive
) -> None:
    baseline = write_run(tmp_path / "baseline.jsonl", 120, seed=3)
    candidate = write_run(tmp_path / "candidate.jsonl", 110, seed=4)

    result = answer_metrics(
        "compare",
        baseline,
        candidate,
        "--json",
        tmp_path / "diff.json",
        "--fail-on-regression",
        "faithfulness=0.05",
    )

    peak = records_read.peak  # the command's, before the library reads both files whole
    printed, written = in_memory(baseline, candidate)
    assert result.stdout == printed and "most regressed" in printed.lower()
    assert (tmp_path / "diff.json").read_text("utf-8") == written
    assert peak <= 4


def test_a_file_without_records_is_refused_naming_it(tmp_path: Path) -> None:
    baseline = write_run(tmp_path / "baseline.jsonl", 3, seed=5)
    other = tmp_path / "other.jsonl"
    other.write_text('{"question": "not a record"}\nnot json\n', "utf-8")

    result = answer_metrics("compare", baseline, other)

    assert result.returncode == 2
    assert f"{other}: holds no answer-metrics results (2 other lines)" in result.stderr


def test_the_permutation_test_of_a_long_run_draws_the_same_flips_in_less_memory() -> None:
    # 5000 paired differences: the flips are drawn 200 at a time, not 1000 (40 MB of signs
    # instead of 80 at once; at 100k pairs 8 MB instead of 1.6 GB); the p-value is the one
    # of the flips drawn 1000 at a time, as before, from the same seeded stream.
    values = np.random.default_rng(7).normal(0.01, 0.3, size=5000)
    rng, hits = np.random.default_rng(0), 0
    for _ in range(3):
        signs = rng.choice((1.0, -1.0), size=(1000, len(values)))
        hits += int(np.sum(np.abs(signs @ values) >= abs(values.sum()) - TOLERANCE))

    assert sign_flip_p_value(values.tolist(), permutations=3000) == (hits + 1) / 3001
