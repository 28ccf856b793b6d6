"""An output file a command writes whole (``--json``, ``--report``), with the CLI's
one-line refusal when it cannot be written."""

from __future__ import annotations

import sys
from pathlib import Path

from langchain_answer_metrics.cli.options import UsageError


def write_output(path: Path | None, flag: str, text: str) -> None:
    """Write ``text`` (ending in a newline) to ``path`` and say where; nothing for None.

    Raises:
        UsageError: the file cannot be written, naming ``flag``.
    """
    if path is None:
        return
    try:
        path.write_text(text + ("" if text.endswith("\n") else "\n"), encoding="utf-8")
    except OSError as error:
        raise UsageError(f"{flag} {path}: cannot write it ({error.strerror})") from None
    print(f"{flag[2:]}: {path}", file=sys.stderr)
