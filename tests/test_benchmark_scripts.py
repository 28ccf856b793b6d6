"""Every script in benchmarks/ runs clean on a tiny input, so its figures can be
reproduced (benchmarks/RESULTS.md). Slow: each runs in a process of its own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "benchmarks"

TINY: dict[str, list[str]] = {
    "agent_trajectories.py": [
        "--trajectories",
        "20",
        "--tool-args",
        "exact",
        "--rounds",
        "2",
        "--modes",
        "strict,subset",
    ],
    # The timed form: the instruction count's valgrind takes a minute a child.
    "client_cpu.py": ["--timed", "1", "--samples", "2", "--strictness", "3", "--before", "HEAD"],
    "budget_precision.py": ["--samples", "6", "--max-concurrency", "4"],
    "cli_memory.py": ["--sizes", "50", "100"],
    "cli_startup.py": ["--rounds", "1", "--before", "HEAD"],
    "completion_curve.py": ["--quick", "--samples", "8", "--latency", "0.01", "--no-curve"],
    "estimate_accuracy.py": ["--samples", "4"],
    "estimate_memory.py": ["--sizes", "10", "20", "--max-growth", "2"],
    "fixed_cost.py": ["--runs", "1", "--latency", "0.05"],
    "measure_local_baseline.py": ["--repeats", "1", "--single-calls", "3", "--pairs", "6"],
    "metric_call_cpu.py": ["--calls", "20", "--rounds", "1"],
    "prompt_sizes.py": [],
    "rag_requests.py": [],
    "ray_actors.py": ["--actors", "1", "--rows", "4", "--latency", "0.01"],
    "trajectory_records.py": [
        "--trajectories",
        "20",
        "--rounds",
        "1",
        "--identity-trajectories",
        "3",
        "--before",
        "HEAD",
    ],
    "run_benchmark.py": [
        "--quick",
        "--samples",
        "4",
        "--wall-samples",
        "4",
        "--rounds",
        "1",
        "--import-repeats",
        "1",
        "--rss-sizes",
        "20,40",
        "--latency",
        "0.01",
    ],
}
"""The tiny input of each script; a script not listed here is run with ``--help``."""

HELPERS = {"server_process.py", "trees.py"}  # imported by the others, not run on its own


def scripts() -> list[str]:
    return sorted(path.name for path in BENCHMARKS.glob("*.py") if path.name not in HELPERS)


@pytest.mark.slow
@pytest.mark.parametrize("script", scripts())
def test_the_script_runs_clean_on_a_tiny_input(script: str, tmp_path: Path) -> None:
    args = TINY.get(script, ["--help"])
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert "Event loop is closed" not in done.stdout + done.stderr
