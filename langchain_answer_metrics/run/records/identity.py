"""Which saved record is a row's: one definition of a row's id and of its text's
fingerprint, for the CLI's dataset rows and the runner's samples alike, so that a file
written by either resumes in the other.

    >>> row_id({"id": "q7", "question": "..."}, number=1)
    'q7'
    >>> row_id({"question": "..."}, number=1)   # no id: its number in the input, from 1
    '1'
    >>> sample_fingerprint(RowFields(response="A.")) == sample_fingerprint(Sample(response="A."))
    True

- **The id** is the row's ``id`` field (a dataset's column, a dict's key; the CLI's
  ``--id-col`` and the runner's ``id_key=`` name another), else its number in the input,
  counted from 1. A :class:`~langchain_answer_metrics.core.sample.Sample` has no id field:
  it is numbered.
- **The fingerprint** is a hash of the fields the metrics read, those present only
  (:func:`~langchain_answer_metrics.checkpoints.fingerprints.sample_fingerprint`): a row
  read from a file by the CLI, the same row as a dict, as a DataFrame's row or as a
  ``Sample`` hash the same.

Files of earlier versions: the CLI hashed a row with every ``Sample`` field named (the
missing ones null), and the runner hashed a ``Sample`` so too
(:func:`earlier_fingerprints`); a saved record with such a fingerprint is the row's as
well (:func:`own_record`). The runner's checkpoints of the format before the records kept
a sample's position from 0, read as its number (:mod:`.legacy`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from langchain_answer_metrics.checkpoints.fingerprints import sample_fingerprint
from langchain_answer_metrics.core.sample import SAMPLE_FIELDS, RowFields, without_surrogates

if TYPE_CHECKING:
    from langchain_answer_metrics.run.records.format import SampleRecord

__all__ = [
    "ID_KEY",
    "IdentifiedFields",
    "earlier_fingerprints",
    "number_id",
    "own_record",
    "row_id",
    "sample_fingerprint",
]

ID_KEY = "id"
"""The field holding a row's id, unless the caller names another."""


def number_id(number: int) -> str:
    """The id of a row without one: its ``number`` in the input, counted from 1."""
    return str(number)


def row_id(row: Any, *, number: int, key: str | None = ID_KEY) -> str:
    """The id of ``row`` (a dataset's record, a dict): its ``key`` value, unless that is
    missing, empty or not a plain value (then, and for ``key=None``, its ``number``).

    Example:
        >>> row_id({"qid": 17}, number=3, key="qid")
        '17'
    """
    value = row.get(key) if key is not None and isinstance(row, Mapping) else None
    if value is None or isinstance(value, (dict, list)) or str(value).strip() == "":
        return number_id(number)
    # An id is a label written to the records and the report: it must be valid UTF-8.
    return without_surrogates(str(value))


class IdentifiedFields(RowFields):
    """A dict row's fields, as the runner maps them, with the row's own id (``row_id``):
    what a checkpoint finds its saved scores by. A row that had no id has none here."""

    row_id: str | None = None

    @classmethod
    def of(cls, fields: RowFields, row_id: str | None) -> RowFields:
        """``fields`` with ``row_id`` kept (unchanged when there is none)."""
        if row_id is None:
            return fields
        identified = cls(fields)
        identified.row_id = row_id
        return identified


def earlier_fingerprints(sample: Any) -> tuple[str, ...]:
    """The fingerprints an earlier version gave this sample's text: the CLI hashed a row
    with every :class:`Sample` field named (a missing one null) and its agent's fields
    beside them; the runner hashed a :class:`Sample` (or a ``PairSample``) whole."""
    if hasattr(sample, "model_dump"):
        return (sample_fingerprint(sample.model_dump(), present_only=False),)
    if not isinstance(sample, Mapping):
        return ()
    named = {**dict.fromkeys(SAMPLE_FIELDS), **sample}
    return (sample_fingerprint(named, present_only=False),)


def own_record(
    record: SampleRecord | None,
    sample_id: str,
    fingerprint: str,
    earlier: Callable[[], Iterable[str]] = tuple,
) -> SampleRecord | None:
    """``record`` if it is the saved record of the sample ``sample_id`` with this text:
    its fingerprint is ``fingerprint``, or one an earlier version gave the same text
    (``earlier()``, asked only then). Such a record is given back with ``fingerprint``,
    so the planner and the record written next see the current one."""
    if record is None or record.id != sample_id:
        return None
    if record.fingerprint == fingerprint:
        return record
    if record.fingerprint and record.fingerprint in earlier():
        return record.model_copy(update={"fingerprint": fingerprint})
    return None
