"""The labelled rows of an alignment: read from the user's dicts, checked before any
request, and fingerprinted (see :mod:`.alignment` for the procedure).

    >>> fields = LabelFields(label="human")
    >>> rows = checked_rows(critic, labelled, fields)
    >>> rows[0].label, fingerprint(rows)
    (True, '3f2a9c0d41b7e6a5')
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_answer_metrics.analysis.alignment_examples import LabelledRow, check_claim_labels
from langchain_answer_metrics.analysis.calibration import parse_label
from langchain_answer_metrics.mapping import SampleMapping
from langchain_answer_metrics.metrics.base import AnswerMetric

MIN_ROWS = 4


@dataclass(frozen=True)
class LabelFields:
    """Where a row holds its label, the humans' explanation and its claim-level labels.

    Example:
        >>> LabelFields(label="human", explanation="why").claims
        'claim_labels'
    """

    label: str = "human"
    explanation: str | None = None
    claims: str = "claim_labels"


def _fields(mapping: SampleMapping, metric: AnswerMetric, row: Mapping[str, Any]) -> Any:
    """What ``metric`` reads from ``row``: a Sample; an agent metric, the fields found
    and the agent's own (messages, expected calls), which it reads in any of their forms."""
    if not getattr(metric, "reads_agent_fields", False):
        return mapping.from_row(row, metric=metric.key)
    found = mapping.fields_of(row, metric=metric.key)
    own = getattr(metric, "agent_fields", ())
    found.update({key: row[key] for key in own if key in row and key not in found})
    return found


def labelled_rows(
    metric: AnswerMetric,
    rows: Iterable[Mapping[str, Any]],
    *,
    label_field: str,
    explanation_field: str | None,
    claim_labels_field: str,
) -> list[LabelledRow]:
    """The rows with a label, each checked for ``metric`` (a bad label or field is a
    ValueError naming the row, the field and the metric, before any request).

    Example:
        >>> labelled_rows(critic, rows, label_field="human", explanation_field=None,
        ...               claim_labels_field="claim_labels")[0].label
        True
    """
    mapping = SampleMapping.for_rows()
    kept = []
    for index, row in enumerate(rows):
        row_id = str(row.get("id", index + 1))
        try:
            label = parse_label(row.get(label_field))
        except ValueError as error:
            problem = f"align ({metric.key}): row {row_id}: {label_field}: {error}"
            raise ValueError(problem) from None
        if label is None:
            continue
        sample = metric.check_sample(_fields(mapping, metric, row))
        explanation = row.get(explanation_field) if explanation_field else None
        kept.append(
            LabelledRow(
                id=row_id,
                sample=sample,
                label=label,
                explanation=str(explanation or ""),
                claim_labels=list(row.get(claim_labels_field) or ()),
            )
        )
    return kept


def checked_rows(
    metric: AnswerMetric, labelled: Iterable[Mapping[str, Any]], fields: LabelFields
) -> list[LabelledRow]:
    """:func:`labelled_rows`, refused unless there are enough of them, each with its own
    id, and their claim labels are well formed: a ValueError before any request.

    Example:
        >>> len(checked_rows(critic, labelled, LabelFields(label="human")))
        12
    """
    rows = labelled_rows(
        metric,
        labelled,
        label_field=fields.label,
        explanation_field=fields.explanation,
        claim_labels_field=fields.claims,
    )
    if len(rows) < MIN_ROWS:
        raise ValueError(
            f"align ({metric.key}): {len(rows)} labelled rows in {fields.label!r}; "
            f"at least {MIN_ROWS} are needed (and tens to measure a gain)"
        )
    ids = [row.id for row in rows]
    if len(set(ids)) != len(ids):
        raise ValueError(f"align ({metric.key}): row ids repeat; give each row its own id")
    check_claim_labels(metric, rows)
    return rows


def fingerprint(rows: Sequence[LabelledRow]) -> str:
    """A short digest of the rows (ids, samples, labels, explanations) a fit was made on.

    Example:
        >>> fingerprint(rows)
        '3f2a9c0d41b7e6a5'
    """
    payload = json.dumps(
        [[row.id, row.sample.model_dump(mode="json"), row.label, row.explanation] for row in rows],
        sort_keys=True,
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:16]
