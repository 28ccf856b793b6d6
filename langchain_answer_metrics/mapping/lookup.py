"""Where one field's raw value is in the sources a :class:`~.SampleMapping` is given.

The default *rules* (:data:`LANGSMITH_RULES`, :data:`ROW_RULES`: the one table of names
every face reads rows with) and how a rule, a key override or a callable override finds
a value (dotted paths into nested dicts and lists, parameters filled by name). What is
found is returned as it is; turning it into a :class:`~langchain_answer_metrics.core.sample.Sample`,
and the errors a user sees, are :mod:`~langchain_answer_metrics.mapping`'s.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from langchain_answer_metrics.core.sample import SAMPLE_FIELDS, SampleField

FieldGetter = Callable[..., Any]
FieldSpec = str | FieldGetter
"""An override: a key name or a callable.

A key is looked up in the field's default source, unless it starts with a source's name
(``"outputs.docs"``); a dotted key that is not itself a key walks nested dicts and lists
(``"result.text"``, ``"documents.0"``). A callable's parameters are filled by name from
the sources (``inputs``, ``outputs``, ``reference_outputs``, ``row``) and extras (``run``,
``example``); a single parameter with another name receives the field's default source."""

ROW_SOURCE = "row"


class FieldRule(BaseModel):
    """Where a field is found by default: the first of ``keys`` present in ``source``.

    With ``single_value``, a source holding exactly one value (or a bare, non-dict value)
    gives that value when none of the keys is present. With ``exclusive``, two of the keys
    present with different values is an error (:class:`AmbiguousFieldError`); otherwise
    the first present wins.
    """

    model_config = ConfigDict(frozen=True)

    source: str
    keys: tuple[str, ...]
    single_value: bool = False
    exclusive: bool = False


LANGSMITH_RULES: dict[SampleField, FieldRule] = {
    "user_input": FieldRule(
        source="inputs", keys=("question", "input", "query", "user_input"), single_value=True
    ),
    "response": FieldRule(
        source="outputs", keys=("output", "answer", "response"), single_value=True
    ),
    "reference": FieldRule(
        source="reference_outputs", keys=("answer", "reference", "expected", "ground_truth")
    ),
    "retrieved_contexts": FieldRule(
        source="outputs", keys=("contexts", "retrieved_contexts", "documents", "context")
    ),
}
"""Defaults for a LangSmith run (``inputs``, ``outputs``) and example (``reference_outputs``)."""

# In one flat row (a chain's output dict, a CSV line) "answer" is the response, so the
# reference is looked up only under names that cannot mean the model's own answer. A row
# is data the user wrote: two columns for one field (``answer`` and ``response`` that
# differ) is a mistake to point out, not a choice to make silently.
ROW_RULES: dict[SampleField, FieldRule] = {
    field: FieldRule(source=ROW_SOURCE, keys=keys, single_value=field == "response", exclusive=True)
    for field, keys in zip(
        SAMPLE_FIELDS,
        (  # user_input, response, reference, contexts
            ("user_input", "question", "input", "query"),
            ("response", "answer", "output"),
            ("reference", "ground_truth", "expected", "expected_answer"),
            ("retrieved_contexts", "contexts", "documents", "context"),
        ),
    )
}
"""Defaults for one flat dict: a chain's output, or a row of a dataset, a DataFrame or
the runner's input. The one table of column names every face reads rows with."""

PairField = Literal["response_a", "response_b"]
AgentField = Literal[
    "messages",
    "reference_tool_calls",
    "reference_messages",
    "turn_contexts",
    "role",
    "goal",
    "topics",
]
RowField = SampleField | PairField | AgentField
PAIR_FIELDS: tuple[PairField, ...] = ("response_a", "response_b")
AGENT_ROW_FIELDS: tuple[AgentField, ...] = (
    "messages",
    "reference_tool_calls",
    "reference_messages",
    # a conversation's: per-turn contexts, the assistant's role, the user's goal, topics
    "turn_contexts",
    "role",
    "goal",
    "topics",
)
ROW_FIELDS: tuple[RowField, ...] = (*SAMPLE_FIELDS, *PAIR_FIELDS, *AGENT_ROW_FIELDS)
"""Every field a row can hold: a :class:`Sample`'s, then a pair's two responses (what
PairwisePreference compares), then an agent's trajectory and the expected one, and a
conversation's own fields (what the agent and conversation metrics read, as found: an
``AgentSample`` or ``ConversationSample`` reads their forms); the other metrics ignore the
fields they do not score."""

PAIR_ROW_RULES: dict[RowField, FieldRule] = {
    field: FieldRule(
        source=ROW_SOURCE, keys=(field, f"answer_{side}", f"output_{side}"), exclusive=True
    )
    for field, side in zip(PAIR_FIELDS, ("a", "b"))
}
"""Where a row holds a pair's two responses (``response_a`` or ``answer_a`` ...)."""


AGENT_ROW_RULES: dict[RowField, FieldRule] = {
    "messages": FieldRule(source=ROW_SOURCE, keys=("messages", "trajectory"), exclusive=True),
    "reference_tool_calls": FieldRule(
        source=ROW_SOURCE, keys=("reference_tool_calls", "expected_tool_calls"), exclusive=True
    ),
    "reference_messages": FieldRule(
        source=ROW_SOURCE, keys=("reference_messages", "expected_messages"), exclusive=True
    ),
    "turn_contexts": FieldRule(source=ROW_SOURCE, keys=("turn_contexts",), exclusive=True),
    "role": FieldRule(
        source=ROW_SOURCE, keys=("role", "system_prompt", "instructions"), exclusive=True
    ),
    "goal": FieldRule(source=ROW_SOURCE, keys=("goal", "user_goal"), exclusive=True),
    "topics": FieldRule(source=ROW_SOURCE, keys=("topics",), exclusive=True),
}
"""Where a row holds an agent's messages and the expected calls or trajectory, and a
conversation's per-turn contexts, role, goal and topics."""

AGENT_LANGSMITH_RULES: dict[RowField, FieldRule] = {
    "messages": FieldRule(source="outputs", keys=("messages",)),
    "reference_tool_calls": FieldRule(
        source="reference_outputs", keys=("reference_tool_calls", "expected_tool_calls")
    ),
    # openevals' convention: the example's outputs hold the reference trajectory.
    "reference_messages": FieldRule(
        source="reference_outputs", keys=("reference_messages", "expected_messages", "messages")
    ),
    # A thread target: its run's outputs hold the per-turn contexts; the example's inputs
    # what the assistant and the user came with.
    "turn_contexts": FieldRule(source="outputs", keys=("turn_contexts",)),
    "role": FieldRule(source="inputs", keys=("role", "system_prompt", "instructions")),
    "goal": FieldRule(source="inputs", keys=("goal", "user_goal")),
    "topics": FieldRule(source="inputs", keys=("topics",)),
}
"""Where an agent target's run (``outputs``) and its example (``reference_outputs``) hold
the trajectory and the expected calls."""


class NotFound(Exception):
    """No value for the field: ``looked_for`` says where it was looked for (given as a
    function when it is worded only if asked: most rows lack most fields, and the runner
    maps every row)."""

    def __init__(self, looked_for: str | Callable[[], str]) -> None:
        self._looked_for = looked_for

    @property
    def looked_for(self) -> str:
        return self._looked_for if isinstance(self._looked_for, str) else self._looked_for()


class Ambiguous(Exception):
    """Two of a rule's keys hold different values (``keys``)."""

    def __init__(self, keys: Sequence[str]) -> None:
        self.keys = keys


def lookup(container: Any, key: str) -> Any:
    """``container[key]``, else a dotted path into nested dicts and lists
    (``"result.answer"``, ``"documents.0"``)."""
    if not isinstance(container, Mapping):
        raise KeyError(key)
    if key in container:
        return container[key]
    value: Any = container
    for part in key.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, Sequence) and not isinstance(value, str):
            try:
                value = value[int(part)]
            except (ValueError, IndexError):
                raise KeyError(key) from None
        else:
            raise KeyError(key)
    return value


def keys_of(value: Any) -> list[str]:
    if isinstance(value, Mapping):
        return [str(key) for key in value]
    if value is None:
        return []
    return [f"<{type(value).__name__} value>"]


def by_rule(rule: FieldRule, sources: Mapping[str, Any]) -> Any:
    container = sources.get(rule.source)
    if isinstance(container, Mapping):
        present = [key for key in rule.keys if key in container]
        first = container[present[0]] if present else None
        if rule.exclusive and any(_differ(container[key], first) for key in present):
            raise Ambiguous(present)
        if present:
            return container[present[0]]
        if rule.single_value and len(container) == 1:
            return next(iter(container.values()))
    elif container is not None and rule.single_value:
        # A bare value (a chain that returns a string) is the field itself.
        return container
    raise NotFound(lambda: _where(rule))


def _where(rule: FieldRule) -> str:
    keys = " or ".join(repr(key) for key in rule.keys)
    single = ", or its single value" if rule.single_value else ""
    return f"{keys} in {rule.source}{single}"


def _differ(first: Any, second: Any) -> bool:
    try:
        return bool(first != second)
    except Exception:  # an array's comparison has no single truth value
        return first is not second


def by_key(spec: str, sources: Mapping[str, Any], default_source: str | None) -> Any:
    # "outputs.answer" names its source; a plain key is looked up in the field's default one.
    prefix, _, rest = spec.partition(".")
    if rest and prefix in sources:
        source, key = prefix, rest
    elif default_source is not None:
        source, key = default_source, spec
    else:
        raise NotFound(f"key {spec!r} (name its source, e.g. 'outputs.{spec}')")
    try:
        return lookup(sources.get(source), key)
    except KeyError:
        raise NotFound(f"key {key!r} in {source}") from None


def call_getter(getter: FieldGetter, sources: Mapping[str, Any], default_source: str | None) -> Any:
    try:
        parameters = list(inspect.signature(getter).parameters.values())
    except (TypeError, ValueError):  # builtins without a signature get the default source
        parameters = []
    named = {p.name: sources.get(p.name) for p in parameters if p.name in sources}
    try:
        if named:
            return getter(**named)
        return getter(sources.get(default_source) if default_source else dict(sources))
    except Exception as error:
        # A getter that cannot read this row (KeyError, IndexError ...) is a missing field.
        raise NotFound(f"a value from the callable, which raised {error!r}") from error
