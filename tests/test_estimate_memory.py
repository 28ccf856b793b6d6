"""``answer-metrics evaluate DATA --estimate`` keeps no copy of the rows it has estimated
(issue 30 §5): its peak memory does not grow with the length of the file.

The estimate used to collect every sample's results and every dry-run request (each
holding its prompt, the row's contexts included) until the end, and the CLI read the whole
file first: 836 MB at 2,000 rows of 10 KB, killed past 6.7 GB at 20,000. Now it streams
the rows through the run's read-ahead window and tallies each sample as it finishes.

The check is a count of bytes, not of seconds: the peak of Python allocations
(``tracemalloc``) over an estimate of N rows and of 10 N rows, each row about 40 KB of
contexts. The run's read-ahead window is narrowed to 4 samples here, so that a short file
already shows the difference (the default window of 256 samples would hold a short file
whole); benchmarks/estimate_memory.py measures the process's resident size at 2,000 and
20,000 rows with the default window (benchmarks/RESULTS.md).
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest
from support import answer_metrics

import langchain_answer_metrics.run.engine as engine

ROWS = 8
CONTEXTS = 12


def write_rows(path: Path, count: int) -> int:
    """``count`` rows of about 40 KB each, every one different; returns a row's size."""
    with path.open("w", encoding="utf-8") as out:
        for number in range(count):
            row = {
                "id": f"row-{number}",
                "response": f"Answer {number} is short.",
                "retrieved_contexts": [
                    f"Context {number}.{k} says a long thing. " * 100 for k in range(CONTEXTS)
                ],
            }
            line = json.dumps(row) + "\n"
            out.write(line)
    return len(line)


def estimate_peak(data: Path) -> int:
    """Peak bytes allocated by an in-process ``--estimate`` of ``data``."""
    command = ["evaluate", data, "--metric", "faithfulness", "--estimate"]
    command += ["--base-url", "http://127.0.0.1:9/v1", "--model", "gpt-4o-mini"]
    tracemalloc.start()
    try:
        done = answer_metrics(*command)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert done.returncode == 0, done.stderr
    return peak


@pytest.mark.slow
def test_the_estimates_memory_does_not_grow_with_the_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine, "window_size", lambda *args, **kwargs: 4)
    short, long = tmp_path / "short.jsonl", tmp_path / "long.jsonl"
    row_bytes = write_rows(short, ROWS)
    write_rows(long, 10 * ROWS)
    estimate_peak(short)  # the command's modules loaded: not counted below
    grown = estimate_peak(long) - estimate_peak(short)
    # Each row beyond the first ROWS may leave a little behind (the run's recent shared
    # calls, bounded), never its own text: before, each kept about 2.5 times its size.
    per_row = grown / (9 * ROWS)
    assert per_row < 0.25 * row_bytes, f"{per_row:,.0f} bytes kept per {row_bytes:,}-byte row"
