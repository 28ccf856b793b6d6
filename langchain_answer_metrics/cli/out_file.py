"""``--out`` appended a line at a time, and its write failures as the user's to fix.

Each record is flushed and fsynced as it is written, so Ctrl-C or a kill loses nothing
scored; a full disk or a file-size limit is a usage error (exit 2) saying that the
samples written before are kept and the same command resumes.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import NoReturn, TextIO

from langchain_answer_metrics.checkpoints import append_line, open_for_append
from langchain_answer_metrics.cli.options import UsageError
from langchain_answer_metrics.cli.records import RECORD_STARTS

__all__ = ["append_to_out", "cannot_append", "close_out", "open_out"]


def open_out(path: Path) -> TextIO:
    """``path`` opened to append records; a usage error when it cannot be written."""
    try:
        # A line cut short by a killed run is ended, so it cannot swallow the next one.
        return open_for_append(path, ours=RECORD_STARTS)  # type: ignore[return-value]
    except OSError as error:
        raise UsageError(f"--out {path}: cannot write it ({error.strerror})") from None


def append_to_out(out: TextIO, line: str, path: Path) -> None:
    """Write one record, flushed and fsynced (so Ctrl-C or a kill loses nothing scored); a
    full disk or a file-size limit is the user's to fix, not a crash."""
    try:
        append_line(out, line)
    except OSError as error:
        cannot_append(error, path)


def cannot_append(error: OSError, path: Path | None) -> NoReturn:
    """The usage error for a record ``path`` could not take."""
    raise UsageError(
        f"--out {path}: cannot write it ({error.strerror or error}); the samples "
        "written before are kept: fix that and rerun the same command to resume"
    ) from None


def close_out(out: TextIO) -> None:
    """Close ``out``. After a failed write the buffer still holds the line, and closing
    retries it: the failure has been reported already."""
    with contextlib.suppress(OSError):
        out.close()
