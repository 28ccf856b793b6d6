"""The suite's file order (tests/conftest.py): the longest files, which the workers take
first, are listed in tests/longest_files.txt, as benchmarks/suite_durations.py writes it
from a ``--durations=0`` log; every name listed is a file still there."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

from conftest import (
    LONGEST_FILES,
    LONGEST_FILES_LIST,
    pytest_collection_modifyitems,
    read_longest_files,
)

ROOT = Path(__file__).resolve().parent.parent


def suite_durations() -> ModuleType:
    path = ROOT / "benchmarks" / "suite_durations.py"
    spec = importlib.util.spec_from_file_location("suite_durations", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_listed_longest_file_exists() -> None:
    assert LONGEST_FILES, "no file listed"
    assert [path for path in LONGEST_FILES if not (ROOT / path).is_file()] == []
    assert len(set(LONGEST_FILES)) == len(LONGEST_FILES)
    # Written by the script (its header), not by hand.
    assert LONGEST_FILES_LIST.read_text("utf-8").startswith(suite_durations().LONGEST_HEADER)


def test_the_script_writes_the_longest_files_of_a_log_as_the_suite_reads_them(
    tmp_path: Path,
) -> None:
    log = tmp_path / "suite.txt"
    log.write_text(
        "...................................                                      [100%]\n"
        "============================= slowest durations ==============================\n"
        "30.00s call     tests/test_ray.py::test_a\n"
        "12.50s setup    tests/test_faults.py::test_b[x]\n"
        "12.50s call     tests/test_faults.py::test_b[x]\n"
        "20.00s call     tests/test_gone_since.py::test_c\n"  # renamed since the log
        "1.00s call     tests/test_cli.py::test_d\n"
        "0.50s teardown tests/test_cli.py::test_d\n"
        "23.50s call     tests/test_ctrl_c.py::test_e\n"
        "= 5 passed in 60.00s =\n",
        "utf-8",
    )
    written = tmp_path / "longest_files.txt"
    files = suite_durations().write_longest(written, log, share=0.05)
    # 100 test seconds: test_cli.py's 1.5 s is under 5 %; the file gone is left out.
    expected = ["tests/test_ray.py", "tests/test_faults.py", "tests/test_ctrl_c.py"]
    assert files == expected
    assert read_longest_files(written) == tuple(expected)
    assert "# From suite.txt: 5 tests timed, 100 test seconds." in written.read_text("utf-8")


def test_the_listed_files_come_first_longest_first() -> None:
    first, second = LONGEST_FILES[:2]
    nodeids = [
        "tests/test_a.py::one",
        f"{second}::x",
        "tests/test_b.py::one",
        "tests/test_b.py::two",
        f"{first}::y",
        f"{second}::z",
    ]
    items: list[Any] = [SimpleNamespace(nodeid=nodeid) for nodeid in nodeids]
    pytest_collection_modifyitems(None, items)  # type: ignore[arg-type]
    assert [item.nodeid for item in items] == [
        f"{first}::y",
        f"{second}::x",
        f"{second}::z",
        "tests/test_b.py::one",  # then by number of tests, most first
        "tests/test_b.py::two",
        "tests/test_a.py::one",
    ]
