"""JSON the user wrote (a dataset line, a cell, a results file), parsed with a limit on
its nesting: a line nested 100,000 levels deep is a data error said in words
(:class:`JSONTooDeepError`, a ``ValueError``), never Python's ``RecursionError``.

    >>> parse_json('{"question": "Q?", "contexts": ["a", "b"]}')["contexts"]
    ['a', 'b']
"""

from __future__ import annotations

import json
from typing import Any

MAX_JSON_DEPTH = 200
"""The deepest nesting of lists and objects accepted in JSON the user wrote: far more than
any dataset row holds, and far below what would exhaust Python's stack when the value is
read, copied or written back."""


class JSONTooDeepError(ValueError):
    """JSON nested deeper than :data:`MAX_JSON_DEPTH` levels: a data error, said in
    words, never a ``RecursionError``.

    Example:
        >>> parse_json("[" * 100_000 + "]" * 100_000)
        JSONTooDeepError: JSON nested more than 200 levels deep
    """

    def __init__(self, limit: int = MAX_JSON_DEPTH) -> None:
        self.limit = limit
        super().__init__(f"JSON nested more than {limit} levels deep")


def parse_json(text: str | bytes, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads(text)``, refusing nesting deeper than ``max_depth``.

    Raises:
        json.JSONDecodeError: not JSON.
        JSONTooDeepError: nested more than ``max_depth`` levels.

    Example:
        >>> parse_json('{"question": "Q?", "contexts": ["a", "b"]}')["contexts"]
        ['a', 'b']
    """
    try:
        value = json.loads(text)
    except RecursionError:
        # The parser recurses once per level: a deep enough line exhausts the stack.
        raise JSONTooDeepError(max_depth) from None
    if json_depth(value) > max_depth:
        raise JSONTooDeepError(max_depth)
    return value


def json_depth(value: Any) -> int:
    """How many lists and dicts deep ``value`` nests (a scalar: 0), without recursing."""
    deepest = 0
    pending: list[tuple[Any, int]] = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth + 1)
        pending.extend((child, depth + 1) for child in children)
    return deepest


__all__ = ["MAX_JSON_DEPTH", "JSONTooDeepError", "json_depth", "parse_json"]
