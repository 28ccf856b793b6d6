"""Where the test suite's time goes, from the logs of ``pytest --durations=0`` runs.

    python -m pytest -q --durations=0 > before.txt    # on the old commit
    python -m pytest -q --durations=0 > after.txt     # on the new one
    python benchmarks/suite_durations.py before.txt after.txt

For each log: the tests timed, the sum of their set-up, call and tear-down times (test
seconds, which add up over workers, unlike wall time) and the files costing most. For two
logs: the tests timed in both, and the ratio of their test seconds, after to before (the
same tests, so tests added meanwhile do not count). With ``--slow-marked``, the test
seconds of the tests ``pytest -m slow --collect-only -q`` lists (pass its output file),
and of the others: the fast tier.

``--write-longest tests/longest_files.txt`` writes the files the test workers take first
(tests/conftest.py) from one log of the whole suite: every file of at least
``--longest-share`` of its test seconds (1 %), longest first, the files still there only:

    python -m pytest -q --durations=0 > suite.txt
    python benchmarks/suite_durations.py suite.txt --write-longest tests/longest_files.txt

A busy machine stretches every duration; compare logs taken under a similar load.
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

LONGEST_HEADER = """\
# The test files that take longest, longest first: pytest-xdist's workers take them
# first (tests/conftest.py), so no long file is left for last. Written by
#   python benchmarks/suite_durations.py LOG --write-longest tests/longest_files.txt
# from LOG, the output of `python -m pytest -q --durations=0` (the whole suite); do not
# edit by hand. A name that is no longer a file fails tests/test_suite_order.py.
"""

DURATION = re.compile(r"^(?P<seconds>\d+(?:\.\d+)?)s (?:setup|call|teardown)\s+(?P<test>\S+)$")


def seconds_per_test(log: Path) -> dict[str, float]:
    """Set-up, call and tear-down seconds per test id, from a ``--durations=0`` log."""
    seconds: dict[str, float] = defaultdict(float)
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        found = DURATION.match(line.strip())
        if found:
            seconds[found["test"]] += float(found["seconds"])
    return dict(seconds)


def by_file(seconds: dict[str, float]) -> list[tuple[str, float]]:
    files: dict[str, float] = defaultdict(float)
    for test, value in seconds.items():
        files[test.split("::", 1)[0]] += value
    return sorted(files.items(), key=lambda item: -item[1])


def describe(name: str, seconds: dict[str, float], top: int) -> None:
    total = sum(seconds.values())
    print(f"{name}: {len(seconds)} tests timed, {total:.0f} test seconds")
    for path, value in by_file(seconds)[:top]:
        print(f"  {value:8.1f} s  {value / total:5.1%}  {path}")


def longest_files(seconds: dict[str, float], *, share: float, root: Path = ROOT) -> list[str]:
    """The files of at least ``share`` of the test seconds, longest first, that still exist
    under ``root`` (a file renamed or removed since the log is left out)."""
    total = sum(seconds.values())
    return [
        path
        for path, value in by_file(seconds)
        if value >= share * total and (root / path).is_file()
    ]


def write_longest(path: Path, log: Path, *, share: float, root: Path = ROOT) -> list[str]:
    """Write the list of :func:`longest_files` from ``log`` to ``path``; returns it.

    Example:
        >>> write_longest(Path("tests/longest_files.txt"), Path("suite.txt"), share=0.01)
        ['tests/test_benchmark_scripts.py', 'tests/test_docs_examples.py', ...]
    """
    seconds = seconds_per_test(log)
    if not seconds:
        raise SystemExit(f"{log}: no test durations in it (run pytest with --durations=0)")
    files = longest_files(seconds, share=share, root=root)
    total = sum(seconds.values())
    source = f"# From {log.name}: {len(seconds)} tests timed, {total:.0f} test seconds.\n"
    path.write_text(LONGEST_HEADER + source + "".join(f"{file}\n" for file in files), "utf-8")
    return files


def listed(collect_only: Path) -> set[str]:
    """Test ids in the output of ``pytest --collect-only -q``."""
    lines = collect_only.read_text(encoding="utf-8").splitlines()
    return {line.strip() for line in lines if "::" in line}


def split(seconds: dict[str, float], slow: Iterable[str]) -> tuple[float, float]:
    marked = set(slow)
    slow_seconds = sum(value for test, value in seconds.items() if test in marked)
    return slow_seconds, sum(seconds.values()) - slow_seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("logs", nargs="+", type=Path, help="--durations=0 logs (1 or 2)")
    parser.add_argument("--top", type=int, default=15, help="files listed per log")
    parser.add_argument(
        "--slow-marked", type=Path, help="output of pytest -m slow --collect-only -q"
    )
    parser.add_argument(
        "--write-longest", type=Path, help="write the longest files (of 1 log) to this file"
    )
    parser.add_argument(
        "--longest-share", type=float, default=0.01, help="least share of the test seconds"
    )
    options = parser.parse_args()
    if options.write_longest:
        if len(options.logs) != 1:
            parser.error("--write-longest reads one log (of the whole suite)")
        files = write_longest(options.write_longest, options.logs[0], share=options.longest_share)
        print(f"{options.write_longest}: {len(files)} files")
    runs = [(log.name, seconds_per_test(log)) for log in options.logs]
    for name, seconds in runs:
        describe(name, seconds, options.top)
        if options.slow_marked:
            slow, fast = split(seconds, listed(options.slow_marked))
            print(f"  marked slow: {slow:.0f} test seconds; the rest (the fast tier): {fast:.0f}")
    if len(runs) == 2:
        (_, before), (_, after) = runs
        common = before.keys() & after.keys()
        old = sum(before[test] for test in common)
        new = sum(after[test] for test in common)
        print(
            f"tests timed in both: {len(common)}; their test seconds {old:.0f} -> {new:.0f} "
            f"(after / before = {new / old:.2f})"
        )
        changed = sorted(common, key=lambda test: after[test] - before[test])
        print("  most time saved:")
        for test in changed[:10]:
            print(f"    {before[test]:7.1f} -> {after[test]:7.1f} s  {test}")


if __name__ == "__main__":
    main()
