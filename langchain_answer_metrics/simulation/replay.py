"""The simulator's replay cache: the simulated user's moves, kept in a file so that a rerun
with the same app replies replays them with no model call.

A move is keyed by the scenario (name, persona, goal), the seed, the turn and the
conversation so far, texts and all: while the app replies as it did, every key is found
and nothing is asked; once a reply changes, every later key changes with it, so only the
turns after the change are asked anew. The file is JSON, rewritten atomically after each
new move, so a run that is stopped keeps what it asked.

    >>> cache = ReplayCache(tmp_path / "simulated.json")
    >>> cache.get("k") is None
    True
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

CACHE_VERSION = 1


def move_key(
    *, name: str, persona: str, goal: str, seed: int, turn: int, so_far: Sequence[tuple[str, str]]
) -> str:
    """The key of the simulated user's move at ``turn`` after ``so_far``."""
    payload = json.dumps(
        {"scenario": [name, persona, goal], "seed": seed, "turn": turn, "so_far": list(so_far)},
        ensure_ascii=False,
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


class ReplayCache:
    """Moves by key, read from and written to ``path`` (None: kept in memory only)."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = Path(path) if path is not None else None
        self._moves: dict[str, dict[str, Any]] = {}
        if self.path is not None and self.path.exists():
            self._moves = self._read(self.path)

    @staticmethod
    def _read(path: Path) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise ValueError(f"{path}: not a simulator cache ({error})") from None
        if not isinstance(data, dict) or data.get("version") != CACHE_VERSION:
            raise ValueError(f"{path}: not a simulator cache (version {CACHE_VERSION} expected)")
        moves = data.get("moves")
        if not isinstance(moves, dict):
            raise ValueError(f"{path}: not a simulator cache (no moves)")
        return moves

    def __len__(self) -> int:
        return len(self._moves)

    def get(self, key: str) -> dict[str, Any] | None:
        """The move kept under ``key``, or None."""
        return self._moves.get(key)

    def put(self, key: str, move: dict[str, Any]) -> None:
        """Keep ``move`` and rewrite the file."""
        self._moves[key] = move
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps({"version": CACHE_VERSION, "moves": self._moves}, ensure_ascii=False)
        handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".simulated-")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                stream.write(text)
                stream.flush()
                os.fsync(stream.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
