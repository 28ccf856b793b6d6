"""The suite's file order (tests/conftest.py): the longest files, which the workers take
first, still exist under the names listed."""

from __future__ import annotations

from pathlib import Path

from conftest import LONGEST_FILES

ROOT = Path(__file__).resolve().parent.parent


def test_every_listed_longest_file_exists() -> None:
    assert [path for path in LONGEST_FILES if not (ROOT / path).is_file()] == []
    assert len(set(LONGEST_FILES)) == len(LONGEST_FILES)
