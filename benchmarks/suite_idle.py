"""Where the test workers sit idle: a pytest plugin, and the report of what it recorded.

    PYTHONPATH=benchmarks SUITE_IDLE_DIR=/tmp/idle \\
        python -m pytest -q -m "not slow" -p suite_idle
    python benchmarks/suite_idle.py /tmp/idle

In every test process, a thread looks every 5 ms at the state of the process's other
threads: a look that finds none running or waiting for a core (state ``R``) is idle time,
a wait on a timer, a socket, a lock or the disk. A thread that waits for a core is ``R``,
so the machine's load does not turn into idle time, unlike wall time. Per test: the wall
time, the process's CPU time and the idle time; per worker: when its collection ended.

The report gives, per worker and in total, the tests' CPU and idle seconds, the files and
tests idle longest, and the files costing most on a quiet machine (CPU plus idle). On a
quiet machine with C cores and W workers, the tests take about the largest of CPU / C,
(CPU + idle) / W and the longest file's CPU + idle (a file stays on one worker).
"""

from __future__ import annotations

import argparse
import json
import os
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

INTERVAL = 0.005
_counts = {"looks": 0, "idle": 0}
_rows: list[tuple[str, float, float, float, float]] = []
_marks: dict[str, float] = {}
_stop = threading.Event()


def _another_thread_runs(me: int) -> bool:
    for tid in os.listdir("/proc/self/task"):
        if int(tid) == me:
            continue
        try:
            with open(f"/proc/self/task/{tid}/stat", encoding="ascii") as stat:
                state = stat.read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue  # the thread ended meanwhile
        if state == "R":
            return True
    return False


def _look() -> None:
    me = threading.get_native_id()
    while not _stop.wait(INTERVAL):
        _counts["looks"] += 1
        if not _another_thread_runs(me):
            _counts["idle"] += 1


# --------------------------------------------------------------------------- the plugin


def pytest_configure(config: Any) -> None:
    _marks["configured"] = time.time()
    threading.Thread(target=_look, daemon=True, name="suite-idle").start()


def pytest_collection_finish(session: Any) -> None:
    _marks["collected"] = time.time()
    _marks["collection_cpu"] = time.process_time()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: Any, nextitem: Any) -> Iterator[None]:
    """Around each test (set-up, call and tear-down): its wall, CPU and idle seconds."""
    looks, idle = _counts["looks"], _counts["idle"]
    started, cpu = time.time(), time.process_time()
    yield
    wall = time.time() - started
    seen = _counts["looks"] - looks
    idle_share = (_counts["idle"] - idle) / seen if seen else 0.0
    _rows.append((item.nodeid, started, wall, time.process_time() - cpu, idle_share * wall))


def pytest_unconfigure(config: Any) -> None:
    folder = os.environ.get("SUITE_IDLE_DIR")
    _stop.set()
    if not folder:
        return
    _marks["ended"] = time.time()
    _marks["cpu"] = time.process_time()
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    path = Path(folder) / f"{worker}.json"
    path.with_suffix(".tmp").write_text(json.dumps({"marks": _marks, "rows": _rows}))
    path.with_suffix(".tmp").replace(path)


# --------------------------------------------------------------------------- the report


def _workers(folder: Path) -> dict[str, dict[str, Any]]:
    return {path.stem: json.loads(path.read_text()) for path in sorted(folder.glob("gw*.json"))}


def _print_workers(workers: dict[str, dict[str, Any]]) -> None:
    start = min(data["marks"]["configured"] for data in workers.values())
    for name, data in workers.items():
        marks, rows = data["marks"], data["rows"]
        last = max((row[1] + row[2] for row in rows), default=marks["collected"])
        print(
            f"{name}: collected at {marks['collected'] - start:5.1f} s "
            f"({marks['collection_cpu']:.1f} CPU s), last test ended at {last - start:6.1f} s, "
            f"{len(rows)} tests: CPU {sum(r[3] for r in rows):6.1f} s, "
            f"idle {sum(r[4] for r in rows):6.1f} s"
        )


def report(folder: Path, *, top: int, cores: int) -> None:
    workers = _workers(folder)
    if not workers:
        raise SystemExit(f"no gw*.json in {folder}: run pytest with -p suite_idle first")
    _print_workers(workers)
    rows = [row for data in workers.values() for row in data["rows"]]
    cpu, idle = sum(r[3] for r in rows), sum(r[4] for r in rows)
    print(f"all tests: {len(rows)}, CPU {cpu:.1f} s, idle {idle:.1f} s")
    files: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for nodeid, _, _, test_cpu, test_idle in rows:
        entry = files[nodeid.split("::", 1)[0]]
        entry[0] += 1
        entry[1] += test_cpu
        entry[2] += test_idle
    longest = max(file_cpu + file_idle for _, file_cpu, file_idle in files.values())
    for count in (len(workers), len(workers) + 1):
        tests = max(cpu / cores, (cpu + idle) / count, longest)
        print(f"  on a quiet {cores}-core machine, {count} workers: tests ~{tests:.0f} s")
    print(f"\nfiles idle longest (idle, CPU, tests), top {top}:")
    for path, (count, file_cpu, file_idle) in sorted(files.items(), key=lambda i: -i[1][2])[:top]:
        print(f"  {file_idle:6.1f} {file_cpu:6.1f} {count:5.0f}  {path}")
    print(f"\nfiles costing most on a quiet machine (CPU + idle), top {top}:")
    ranked = sorted(files.items(), key=lambda i: -(i[1][1] + i[1][2]))[:top]
    for path, (count, file_cpu, file_idle) in ranked:
        print(f"  {file_cpu + file_idle:6.1f} {count:5.0f}  {path}")
    print(f"\ntests idle longest (idle, CPU), top {top}:")
    for row in sorted(rows, key=lambda r: -r[4])[:top]:
        print(f"  {row[4]:6.2f} {row[3]:6.2f}  {row[0]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="the SUITE_IDLE_DIR of a run")
    parser.add_argument("--top", type=int, default=15, help="files and tests listed")
    parser.add_argument("--cores", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    report(args.folder, top=args.top, cores=args.cores)


if __name__ == "__main__":
    main()
