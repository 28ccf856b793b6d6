"""Which scores an alignment's run sent for, and which it read back from its checkpoint
(:class:`~.alignment_run.AlignmentBudget` counts only the former as spent).

    >>> before = saved_offsets("scores.jsonl")
    >>> rows = evaluate_dataset(data, [metric], checkpoint="scores.jsonl")
    >>> scored_since("scores.jsonl", before)   # the ids scored by this run
    {'q1', 'q2#held-out'}

The runner appends a line for each sample it scores and none for a sample it gives back
from the file: an id whose last line moved (or that is new) was scored by the run. A line
cut short by a kill is dropped by the run before it appends, and was no id's.
"""

from __future__ import annotations

import os
from pathlib import Path

from langchain_answer_metrics.run.records.saved import ForeignFileError, SavedRecords

__all__ = ["saved_offsets", "scored_since"]


def saved_offsets(checkpoint: str | os.PathLike[str] | None) -> dict[str, int] | None:
    """Where each id's last line starts in ``checkpoint`` (None without one; empty when
    it is not written yet, or is not a checkpoint: the run refuses that one)."""
    if checkpoint is None:
        return None
    try:
        return dict(SavedRecords.load(Path(checkpoint), what="checkpoint").offsets)
    except ForeignFileError:
        return {}


def scored_since(
    checkpoint: str | os.PathLike[str] | None, before: dict[str, int] | None
) -> set[str] | None:
    """The ids a run scored into ``checkpoint`` since ``before`` (its
    :func:`saved_offsets` then); None without one."""
    after = saved_offsets(checkpoint)
    if after is None or before is None:
        return None
    return {row_id for row_id, offset in after.items() if before.get(row_id) != offset}
