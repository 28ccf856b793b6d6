"""Calls compared and matched: the arithmetic under TrajectoryMatch and ToolCallF1.

A call matches an expected call when the names are the same and the arguments agree under
the argument mode (or the tool's override). Top-level arguments are compared as JSON
values: a nested value is compared whole, key order does not matter, ``1 == 1.0`` and
``true != 1``. Arguments that were not a JSON object are compared as text.

- :func:`largest_matching`: the largest one-to-one matching of calls made and expected
  (augmenting paths, not a greedy pass: a greedy pass can pair a call with an expected call
  another needed, and miss a full matching that exists).
- :func:`ordered_matching`: a one-to-one matching that keeps the order of both
  trajectories, calls of one parallel group in any order among themselves, or the longest
  such prefix when there is none.

    >>> same = CallComparison(tool_args="superset")
    >>> same(ToolCall(name="f", args={"a": 1, "b": 2}), ToolCall(name="f", args={"a": 1.0}))
    True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from langchain_answer_metrics.agents.calls import ToolCall
from langchain_answer_metrics.agents.trajectory import TrajectoryCall

ArgsMode = Literal["exact", "ignore", "superset", "subset"]
ARGS_MODES: tuple[ArgsMode, ...] = ("exact", "ignore", "superset", "subset")
ArgsOverride = Callable[[dict[str, Any], dict[str, Any]], bool] | Sequence[str]
"""Per tool: a callable ``(actual_args, expected_args) -> bool``, or the argument names to
compare (the others are ignored)."""


def json_equal(first: Any, second: Any) -> bool:
    """Two JSON values are the same: ``1 == 1.0``, ``True != 1``, key order ignored."""
    first_type, second_type = type(first), type(second)
    if first_type is str and second_type is str:
        return bool(first == second)
    if first_type is bool or second_type is bool:
        return first_type is second_type and first == second
    if isinstance(first, Mapping) and isinstance(second, Mapping):
        return first.keys() == second.keys() and all(
            json_equal(value, second[key]) for key, value in first.items()
        )
    if isinstance(first, (list, tuple)) and isinstance(second, (list, tuple)):
        return len(first) == len(second) and all(map(json_equal, first, second))
    if isinstance(first, (int, float)) and isinstance(second, (int, float)):
        return bool(first == second)
    if first is None or second is None:
        return first is second
    return first_type is second_type and bool(first == second)


def _exact(actual: dict[str, Any], expected: dict[str, Any]) -> bool:
    return actual.keys() == expected.keys() and all(
        json_equal(value, expected[key]) for key, value in actual.items()
    )


def _superset(actual: dict[str, Any], expected: dict[str, Any]) -> bool:
    return all(key in actual and json_equal(actual[key], value) for key, value in expected.items())


def _subset(actual: dict[str, Any], expected: dict[str, Any]) -> bool:
    return _superset(expected, actual)


def _ignore(actual: dict[str, Any], expected: dict[str, Any]) -> bool:
    return True


_ARGS_RULES: dict[str, Callable[[dict[str, Any], dict[str, Any]], bool]] = {
    "exact": _exact,
    "ignore": _ignore,
    "superset": _superset,
    "subset": _subset,
}


def _named_arguments(names: Sequence[str]) -> Callable[[dict[str, Any], dict[str, Any]], bool]:
    def compare(actual: dict[str, Any], expected: dict[str, Any]) -> bool:
        return all(
            (name in actual) == (name in expected)
            and (name not in actual or json_equal(actual[name], expected[name]))
            for name in names
        )

    return compare


class CallComparison:
    """Whether a call made matches an expected one: ``comparison(actual, expected)``.

    Args:
        tool_args: ``"exact"``, ``"ignore"`` (names only), ``"superset"`` (the call has
            every expected argument, and may have more) or ``"subset"`` (every argument of
            the call is expected; some expected ones may be missing).
        overrides: per tool name, a callable or the argument names to compare, instead
            of ``tool_args`` for that tool.

    Raises:
        ValueError: from a call, when an override raised (named, with the tool).
    """

    def __init__(
        self, *, tool_args: ArgsMode = "exact", overrides: Mapping[str, ArgsOverride] | None = None
    ) -> None:
        self.tool_args = tool_args
        self._rule = _ARGS_RULES[tool_args]
        self._overrides = {
            name: rule if callable(rule) else _named_arguments(list(rule))
            for name, rule in (overrides or {}).items()
        }

    def by_key(self, call: ToolCall) -> bool:
        """Whether calls of ``call``'s tool match exactly when their keys are equal (exact
        arguments, no override), so they can be looked up instead of compared in pairs."""
        return self.tool_args == "exact" and call.name not in self._overrides

    def __call__(self, actual: ToolCall, expected: ToolCall) -> bool:
        if actual.name != expected.name:
            return False
        override = self._overrides.get(actual.name)
        if override is None and self.tool_args == "ignore":
            return True
        if actual.args is None or expected.args is None:
            # Arguments that were not a JSON object: the same text, or no match.
            return (
                actual.args is None
                and expected.args is None
                and (
                    (actual.arguments_text or "").strip() == (expected.arguments_text or "").strip()
                )
            )
        if override is None:
            return self._rule(actual.args, expected.args)
        try:
            return bool(override(dict(actual.args), dict(expected.args)))
        except Exception as error:
            raise ValueError(
                f"tool_args_overrides[{actual.name!r}] raised {type(error).__name__}: {error}"
            ) from error


Pairs = dict[int, int]
"""Expected call's position -> the position of the call made matched to it."""


def json_key(value: Any) -> Any:
    """A hashable stand-in for a JSON value: two values are :func:`json_equal` exactly
    when their keys are equal (a bool is tagged apart from numbers; ``1`` and ``1.0``
    hash alike, as in Python)."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, Mapping):
        return ("object", frozenset((key, json_key(item)) for key, item in value.items()))
    if isinstance(value, (list, tuple)):
        return ("array", tuple(json_key(item) for item in value))
    if isinstance(value, (str, int, float)) or value is None:
        return value
    return ("other", id(value))  # not JSON: equal to itself only


def _exact_key(call: ToolCall) -> Any:
    if call.args is None:
        return (call.name, "text", (call.arguments_text or "").strip())
    return (call.name, json_key(call.args))


def _candidates(
    actual: Sequence[TrajectoryCall],
    expected: Sequence[TrajectoryCall],
    same: CallComparison,
) -> list[list[int]]:
    """Per expected call, the calls made that match it: under exact arguments, the calls
    with the same key (a hash lookup); otherwise each call of the same name, compared."""
    by_key: dict[Any, list[int]] = {}
    by_name: dict[str, list[int]] = {}
    for index, made in enumerate(actual):
        by_name.setdefault(made.call.name, []).append(index)
        if same.by_key(made.call):
            by_key.setdefault(_exact_key(made.call), []).append(index)
    found = []
    for wanted in expected:
        if same.by_key(wanted.call):
            found.append(by_key.get(_exact_key(wanted.call), []))
        else:
            found.append(
                [
                    index
                    for index in by_name.get(wanted.call.name, ())
                    if same(actual[index].call, wanted.call)
                ]
            )
    return found


def largest_matching(
    actual: Sequence[TrajectoryCall], expected: Sequence[TrajectoryCall], same: CallComparison
) -> Pairs:
    """The largest one-to-one matching of ``actual`` and ``expected`` calls: expected
    position -> actual position. Where several are largest, earlier calls pair first."""
    candidates = _candidates(actual, expected, same)
    owner: dict[int, int] = {}  # actual -> expected
    for wanted in range(len(expected)):
        free = next((made for made in candidates[wanted] if made not in owner), None)
        if free is not None:  # the easy case first: an unclaimed match
            owner[free] = wanted
        else:
            _augment(wanted, candidates, owner, set())
    return {wanted: made for made, wanted in owner.items()}


# A function of its own, not a closure calling itself: such a closure is a reference cycle
# (the function, its cell), left with what it holds for the garbage collector to find,
# ~20 objects per trajectory scored (measured).
def _augment(
    wanted: int, candidates: list[list[int]], owner: dict[int, int], seen: set[int]
) -> bool:
    """An augmenting path from expected call ``wanted``: it takes a candidate, moving the
    expected call that held it to another of its candidates, and so on."""
    for made in candidates[wanted]:
        if made in seen:
            continue
        seen.add(made)
        if made not in owner or _augment(owner[made], candidates, owner, seen):
            owner[made] = wanted
            return True
    return False


def _groups(calls: Sequence[TrajectoryCall]) -> list[tuple[int, ...]]:
    groups: dict[int, list[int]] = {}
    for index, call in enumerate(calls):
        groups.setdefault(call.group, []).append(index)
    return [tuple(members) for _, members in sorted(groups.items())]


def ordered_matching(
    actual: Sequence[TrajectoryCall], expected: Sequence[TrajectoryCall], same: CallComparison
) -> tuple[bool, list[tuple[int, int]]]:
    """``(complete, pairs)``: whether every call made matches every expected call in one
    order both trajectories allow (a parallel group's calls in any order among
    themselves), and the pairs ``(expected, actual)`` in that order; when there is none,
    the longest such prefix found.

    The search takes the pairs in order: the next pair joins the first unfinished group
    of each side. The smaller of the two groups' remainders must be used up first, so
    its first call is paired with each candidate of the other in turn; states already
    known to fail are not searched again.
    """
    actual_groups, expected_groups = _groups(actual), _groups(expected)
    known: dict[tuple[int, int], bool] = {}

    def matches(wanted: int, made: int) -> bool:
        key = (wanted, made)
        if key not in known:
            known[key] = same(actual[made].call, expected[wanted].call)
        return known[key]

    def settled(state: State) -> State:
        i, left, j, right = state
        if not left and i + 1 < len(actual_groups):
            i, left = i + 1, frozenset(actual_groups[i + 1])
        if not right and j + 1 < len(expected_groups):
            j, right = j + 1, frozenset(expected_groups[j + 1])
        return i, left, j, right

    def choices(state: State) -> list[tuple[int, int]]:
        _, left, _, right = state
        if not left or not right:
            return []
        if len(left) <= len(right):
            made = min(left)
            return [(wanted, made) for wanted in sorted(right) if matches(wanted, made)]
        wanted = min(right)
        return [(wanted, made) for made in sorted(left) if matches(wanted, made)]

    start = settled((-1, frozenset(), -1, frozenset()))
    failed: set[State] = set()
    best: tuple[int, Path] = (0, None)
    stack: list[tuple[State, Path, int, list[tuple[int, int]]]] = [(start, None, 0, choices(start))]
    while stack:
        state, path, depth, options = stack[-1]
        if not state[1] and not state[3]:
            return True, _unrolled(path)
        while options:
            wanted, made = options.pop(0)
            following = settled((state[0], state[1] - {made}, state[2], state[3] - {wanted}))
            if following in failed:
                continue
            step: Path = ((wanted, made), path)
            if depth + 1 > best[0]:
                best = (depth + 1, step)
            stack.append((following, step, depth + 1, choices(following)))
            break
        else:
            failed.add(state)
            stack.pop()
    return False, _unrolled(best[1])


def longest_in_order(
    actual: Sequence[TrajectoryCall], expected: Sequence[TrajectoryCall], same: CallComparison
) -> Pairs:
    """The most pairs that keep both trajectories' order (their longest common
    subsequence, calls compared with ``same``): a diff of the two, for showing where a
    strict match went wrong."""
    rows, columns = len(expected), len(actual)
    lengths = [[0] * (columns + 1) for _ in range(rows + 1)]
    for wanted in range(rows - 1, -1, -1):
        for made in range(columns - 1, -1, -1):
            lengths[wanted][made] = (
                lengths[wanted + 1][made + 1] + 1
                if same(actual[made].call, expected[wanted].call)
                else max(lengths[wanted + 1][made], lengths[wanted][made + 1])
            )
    pairs: Pairs = {}
    wanted = made = 0
    while wanted < rows and made < columns:
        if lengths[wanted][made] == lengths[wanted + 1][made + 1] + 1 and same(
            actual[made].call, expected[wanted].call
        ):
            pairs[wanted] = made
            wanted, made = wanted + 1, made + 1
        elif lengths[wanted + 1][made] >= lengths[wanted][made + 1]:
            wanted += 1
        else:
            made += 1
    return pairs


State = tuple[int, frozenset[int], int, frozenset[int]]
Path = tuple[tuple[int, int], Any] | None


def _unrolled(path: Path) -> list[tuple[int, int]]:
    pairs = []
    while path is not None:
        pairs.append(path[0])
        path = path[1]
    return pairs[::-1]
