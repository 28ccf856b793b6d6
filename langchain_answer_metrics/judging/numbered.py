"""Verdicts on numbered items (claims, contexts, turns, intents), asked in one request:
one verdict per item, each to its item.

A reply with more or fewer verdicts than items fails :func:`count_check` and is re-asked
(never trimmed), with a message saying exactly what to change. A reply with one verdict
per item but numbered wrong (0-based, all the same, none) is taken in the order given,
and :func:`in_item_order` says so, so the result can flag it.

    >>> numbers = item_numbers(2)  # claims 1 and 2
    >>> in_item_order([Verdict(index=2), Verdict(index=1)], numbers)
    ([Verdict(index=1), Verdict(index=2)], False)
    >>> count_check(numbers, "claim")(Reply(verdicts=[Verdict(index=1)]))
    'there are 2 claims to judge, numbered 1 to 2, but your reply gave 1 verdict ...'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

__all__ = ["Indexed", "IndexedVerdicts", "count_check", "in_item_order", "item_numbers"]


class Indexed(Protocol):
    """A verdict on one numbered item: the item's number, if the judge gave one."""

    @property
    def index(self) -> int | None: ...


class IndexedVerdicts(Protocol):
    """A reply holding verdicts on numbered items."""

    @property
    def verdicts(self) -> Sequence[Indexed]: ...


VerdictT = TypeVar("VerdictT", bound=Indexed)


def item_numbers(count: int) -> list[int]:
    """The numbers of ``count`` items numbered from 1 (claims, contexts).

    Example:
        >>> item_numbers(3)
        [1, 2, 3]
    """
    return list(range(1, count + 1))


def _listed(numbers: Sequence[int]) -> str:
    if len(numbers) > 1 and list(numbers) == item_numbers(len(numbers)):
        return f"1 to {len(numbers)}"
    return ", ".join(map(str, numbers)) or "none"


def count_check(numbers: Sequence[int], noun: str) -> Callable[[Any], str | None]:
    """A check of a reply (any schema with ``verdicts``: :class:`IndexedVerdicts`): one
    verdict per item (``noun``), whatever their numbers; else what to change, precisely
    (sent back to the judge).

    Example:
        >>> count_check([2, 3], "turn")(Reply(verdicts=[]))
        'there are 2 turns to judge, numbered 2, 3, but your reply gave 0 verdicts ...'
    """
    listed = _listed(numbers)

    def check(reply: Any) -> str | None:
        verdicts: Sequence[Indexed] = reply.verdicts
        given = len(verdicts)
        if given == len(numbers):
            return None
        indices = [verdict.index for verdict in verdicts]
        return (
            f"there are {len(numbers)} {noun}s to judge, numbered {listed}, but your reply "
            f"gave {given} verdict{'' if given == 1 else 's'} (indices {indices or 'none'}). "
            f"Give exactly one verdict per {noun}: {len(numbers)} verdicts, indices {listed}."
        )

    return check


def in_item_order(
    verdicts: Sequence[VerdictT], numbers: Sequence[int]
) -> tuple[list[VerdictT], bool]:
    """The verdicts in the order of ``numbers``, and whether their own numbers were
    ignored to get there.

    Numbered with ``numbers`` (in any order), each goes to its item. Numbered otherwise
    (0-based, all the same, missing), they are taken in the order given.

    Example:
        >>> in_item_order([Verdict(index=0), Verdict(index=1)], [1, 2])[1]
        True
    """
    by_number = {verdict.index: verdict for verdict in verdicts}
    if len(verdicts) == len(numbers) == len(by_number) and set(by_number) == set(numbers):
        return [by_number[number] for number in numbers], False
    return list(verdicts), True
