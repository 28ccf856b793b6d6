"""What a run keeps of what it did: durable JSON lines, atomic outputs, the lock of one
writer (:mod:`.locks`), and what a rerun compares (:mod:`.signatures`).

The records of a run (the runner's ``checkpoint=`` and the CLI's ``--out``, one format:
:mod:`langchain_answer_metrics.run.records`) are written and read with these rules:

- a line is appended, flushed and fsynced as soon as its sample is finished
  (:func:`append_line`), so a killed run loses at most the line it was writing;
- a line cut short (a SIGKILL mid-write, even inside a multi-byte UTF-8 character) is
  unreadable, and is ignored and redone (:func:`read_lines`); a rerun that appends
  first rewrites the file without it, atomically, so the file stays valid JSON Lines
  for other readers (``pandas.read_json(path, lines=True)``) (:func:`open_for_append`);
- only our own lines are ever dropped: a line cut short is one that begins as ours do
  (:func:`is_torn_line`), and a file holding any other line is someone else's, refused
  before anything is written (:func:`line_owner`); a symbolic link is written through,
  never replaced (:func:`link_target`);
- a report or summary is written whole or not at all (:func:`write_atomically`): a
  full disk leaves the previous file, or none, never half of one;
- a saved outcome is reused only for the same sample text (:func:`sample_fingerprint`)
  scored by a metric with the same settings, models and prompts (:func:`metric_signature`;
  the signatures are :mod:`~langchain_answer_metrics.checkpoints.signatures`').
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal

from langchain_answer_metrics.checkpoints.fingerprints import (
    sample_fingerprint,
    settings_signature,
)
from langchain_answer_metrics.core.json_text import parse_json
from langchain_answer_metrics.core.sample import without_surrogates

if TYPE_CHECKING:
    from langchain_answer_metrics.checkpoints.signatures import metric_signature, prompt_settings


def __getattr__(name: str) -> Any:
    # The signatures read the metrics and their prompts: loaded when a run signs one, not
    # when a dataset is read (the command line's data errors stay quick).
    if name in ("metric_signature", "prompt_settings"):
        from langchain_answer_metrics.checkpoints import signatures

        return getattr(signatures, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def read_lines(path: Path) -> tuple[list[Any], int]:
    """The JSON values of the file's lines, and how many lines could not be read (cut
    short, not UTF-8, not JSON). A missing file has none."""
    values: list[Any] = []
    unreadable = 0
    for _, value in iter_lines(path):
        if value is _UNREADABLE:
            unreadable += 1
        else:
            values.append(value)
    return values, unreadable


_UNREADABLE: Any = object()


def iter_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """Each non-blank line's byte offset and JSON value, read a line at a time;
    :data:`_UNREADABLE` for a line that is cut short, not UTF-8 or not JSON. A missing
    file has none."""
    for start, _, value in iter_raw_lines(path):
        yield start, value


def iter_raw_lines(path: Path) -> Iterator[tuple[int, bytes, Any]]:
    """Each non-blank line's byte offset, bytes and JSON value (as :func:`iter_lines`)."""
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        return
    with handle:
        offset = 0
        for raw in handle:
            start, offset = offset, offset + len(raw)
            if not raw.strip():
                continue
            try:
                yield start, raw, parse_json(raw.decode("utf-8"))
            except (UnicodeDecodeError, ValueError):
                yield start, raw, _UNREADABLE


def is_unreadable(value: Any) -> bool:
    """Whether ``value`` (from :func:`iter_lines`) stands for a line that was not JSON."""
    return value is _UNREADABLE


def is_torn_line(raw: bytes, starts: Sequence[bytes]) -> bool:
    """Whether ``raw``, a line that is not JSON, is one of ours cut short by a kill: it
    begins as our lines begin (``starts``, e.g. ``b'{"schema_version": '``). Any other
    line is someone else's, never ours to drop (a line cut before its first 20 bytes
    cannot be told from a stranger's: the file is refused, not rewritten)."""
    return any(raw.startswith(start) for start in starts)


def line_owner(
    raw: bytes, value: Any, *, starts: Sequence[bytes], is_ours: Callable[[Any], bool]
) -> Literal["ours", "torn", "foreign"]:
    """Whose line ``raw`` (with its JSON ``value`` from :func:`iter_raw_lines`) is: one of
    ours (``is_ours(value)``), one of ours cut short (:func:`is_torn_line`), or someone
    else's (a dataset row, a line of text, a binary blob)."""
    if is_unreadable(value):
        return "torn" if is_torn_line(raw, starts) else "foreign"
    return "ours" if is_ours(value) else "foreign"


def drop_torn_lines(path: Path, *, ours: Sequence[bytes]) -> int:
    """Rewrite ``path`` without the lines of ours cut short by a kill (unreadable lines
    that begin as ``ours`` do, :func:`is_torn_line`), atomically; returns how many were
    dropped. Every other line, readable or not, is kept byte for byte."""
    if not path.is_file() or not any(
        is_unreadable(value) and is_torn_line(raw, ours) for _, raw, value in iter_raw_lines(path)
    ):
        return 0
    dropped = 0

    def kept() -> Iterator[bytes]:
        nonlocal dropped
        for _, raw, value in iter_raw_lines(path):
            if is_unreadable(value) and is_torn_line(raw, ours):
                dropped += 1
                continue
            yield raw if raw.endswith(b"\n") else raw + b"\n"

    write_atomically(path, kept())
    return dropped


def write_atomically(path: Path, chunks: Iterable[str | bytes]) -> None:
    """Write ``chunks`` to ``path`` whole or not at all: into a temporary file in the same
    folder, fsynced, then renamed over ``path``. On any error (a full disk, a file-size
    limit) the temporary file is removed, ``path`` is left as it was, and the error is
    raised. A path that is not a regular file (``/dev/stdout``) is written directly.

    A symbolic link is written through: its target is replaced (in the target's folder)
    and the link stays a link, pointing at the new file."""
    if path.exists() and not path.is_file():
        with path.open("ab") as direct:
            for chunk in chunks:
                direct.write(chunk.encode("utf-8") if isinstance(chunk, str) else chunk)
        return
    path = link_target(path)
    # Opened like any new file (the umask applies), under a name no one else uses.
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with temporary.open("xb") as handle:
            for chunk in chunks:
                handle.write(chunk.encode("utf-8") if isinstance(chunk, str) else chunk)
            handle.flush()
            os.fsync(handle.fileno())
        if path.exists():
            with contextlib.suppress(OSError):
                os.chmod(temporary, path.stat().st_mode)  # keep the replaced file's mode
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


def link_target(path: Path) -> Path:
    """The file a symbolic link ``path`` finally points at (``path`` itself when it is
    not a link; raises OSError for a loop of links)."""
    if not path.is_symlink():
        return path
    try:
        return path.resolve(strict=False)
    except RuntimeError as error:  # a loop of links, on Python 3.11 and 3.12
        raise OSError(40, "Too many levels of symbolic links", str(path)) from error


def open_for_append(path: Path, *, ours: Sequence[bytes]) -> IO[str]:
    """``path`` opened for appending lines. Lines of ours cut short by a kill (they begin
    as ``ours`` do) are dropped first (:func:`drop_torn_lines`), so one cannot swallow the
    next line and the file stays valid JSON Lines. Raises OSError when it cannot be
    written."""
    drop_torn_lines(path, ours=ours)
    ends_cleanly = True
    # Only a regular file is read: /dev/stdout or a pipe would block, /dev/full or
    # /dev/zero would never end.
    if path.is_file() and path.stat().st_size:
        with path.open("rb") as tail:
            tail.seek(-1, os.SEEK_END)
            ends_cleanly = tail.read(1) == b"\n"
    file = path.open("a", encoding="utf-8")
    if not ends_cleanly:
        file.write("\n")
    return file


def append_line(file: IO[str], line: str) -> None:
    """Write one line and make it durable: flushed and fsynced (raises OSError)."""
    file.write(line if line.endswith("\n") else line + "\n")
    file.flush()
    try:
        os.fsync(file.fileno())
    except OSError as error:
        # A pipe or a character device (--out /dev/stdout) cannot be synced; fine.
        if error.errno not in _UNSYNCABLE:
            raise


_UNSYNCABLE = {22, 95}  # EINVAL, EOPNOTSUPP


def json_line(value: Any) -> str:
    """``value`` as one JSON line, keeping non-ASCII text readable; a lone surrogate,
    which UTF-8 cannot hold, becomes U+FFFD."""
    return without_surrogates(json.dumps(value, ensure_ascii=False)) + "\n"


__all__ = [  # the signatures are re-exported: a rerun compares them here
    "append_line",
    "drop_torn_lines",
    "is_torn_line",
    "is_unreadable",
    "iter_lines",
    "iter_raw_lines",
    "json_line",
    "line_owner",
    "link_target",
    "metric_signature",
    "open_for_append",
    "prompt_settings",
    "read_lines",
    "sample_fingerprint",
    "settings_signature",
    "write_atomically",
]
