"""Compatibility with what 0.1.0 wrote and read: its one home, to be removed in 0.3.0.

Decided in docs/architecture.md ("Compatibility"): each piece below keeps data or code
written against 0.1.0 working for one more minor version, and nothing else may grow here.

- :class:`ReadsLikeDict`: results and details also read like the dicts they replaced
  (``result["score"]``, ``details["models"][m]["verdict"]``).
- :func:`infer_kind`: details recorded before they carried a ``kind``, typed by their keys.
- :func:`record_in_current_shape`: ``--out`` lines of version 1 (``"version": 1``).

    >>> infer_kind({"models": {"judge": {"votes": ["PASS"]}}})
    'aspect_critic'

Imports nothing of ours.
"""

from __future__ import annotations

from collections.abc import ItemsView, KeysView, Mapping, ValuesView
from typing import Any

from pydantic import BaseModel

REMOVED_IN = "0.3.0"

__all__ = ["REMOVED_IN", "ReadsLikeDict", "infer_kind", "record_in_current_shape"]


class ReadsLikeDict(BaseModel):
    """A model that also reads like the dict it dumps to: ``model["field"]``, ``get``,
    ``in``, ``keys``/``values``/``items``, ``len`` and equality with such a dict."""

    def keys(self) -> KeysView[str]:
        return self._as_dict().keys()

    def values(self) -> ValuesView[Any]:
        return self._as_dict().values()

    def items(self) -> ItemsView[str, Any]:
        return self._as_dict().items()

    def get(self, key: str, default: Any = None) -> Any:
        return self._as_dict().get(key, default)

    def __getitem__(self, key: str) -> Any:
        return self._as_dict()[key]

    def __contains__(self, key: object) -> bool:
        return key in self._as_dict()

    def __len__(self) -> int:
        return len(self._as_dict())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return self._as_dict() == dict(other)
        return super().__eq__(other)

    def _as_dict(self) -> dict[str, Any]:
        """The fields (typed values, not dumped) under the keys the dump has."""
        return {name: getattr(self, name) for name in type(self).model_fields}


# The built-in metrics of 0.1.0, the only ones that wrote details without a kind.
BUILT_IN_KINDS: tuple[str, ...] = (
    "factual_correctness",
    "faithfulness",
    "aspect_critic",
    "semantic_similarity",
    "answer_correctness",
)

# Keys that only one metric's details (or its models' details) have, most telling first.
_MARKS: tuple[tuple[str, frozenset[str]], ...] = (
    ("answer_correctness", frozenset({"factual_correctness", "semantic_similarity", "weights"})),
    ("aspect_critic", frozenset({"criterion", "strictness", "votes", "verdict"})),
    ("semantic_similarity", frozenset({"long_text", "rescale_baseline", "cosine"})),
    ("factual_correctness", frozenset({"mode", "beta", "reference_claims", "precision", "recall"})),
    ("faithfulness", frozenset({"supported", "total"})),
)


def infer_kind(details: Mapping[str, Any], key: object = None) -> str | None:
    """Which built-in metric made ``details`` that carry no ``kind``: by the keys only one
    metric's details have (theirs or their models'), else by the result's ``key`` when it
    names a metric, else claims of the response alone read as Faithfulness's."""
    if isinstance(details.get("kind"), str) and details["kind"] in BUILT_IN_KINDS:
        return str(details["kind"])
    names = set(details)
    models = details.get("models")
    if isinstance(models, Mapping):
        for model_details in models.values():
            if isinstance(model_details, Mapping):
                names.update(model_details)
    for kind, marks in _MARKS:
        if names & marks:
            return kind
    by_key = next((kind for kind in BUILT_IN_KINDS if kind == key), None)
    return by_key or ("faithfulness" if "response_claims" in names else None)


def record_in_current_shape(data: Any, schema_version: int) -> Any:
    """An ``--out`` line of version 1 in the current shape; anything else as it is.

    Version 1 named its version field ``version``; a line with no version at all is read
    as version 1 only if it has the record's ``id`` and ``metrics``, so that the line of a
    dataset is never taken for a record.
    """
    if not isinstance(data, dict) or "schema_version" in data:
        return data
    if data.get("version") == 1 or (
        "version" not in data and "id" in data and isinstance(data.get("metrics"), dict)
    ):
        fields = {name: value for name, value in data.items() if name != "version"}
        return {"schema_version": schema_version, **fields}
    return data
