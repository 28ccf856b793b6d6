"""Hashes of a sample's text and of a metric's settings: plain JSON and SHA-256, so that
reading a dataset (each row's fingerprint) loads no metric."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any


def sample_fingerprint(sample: Any, *, present_only: bool = True) -> str:
    """A hash of a sample's text: a rerun re-scores a sample whose text changed.

    ``sample`` is a :class:`~langchain_answer_metrics.core.sample.Sample` (its fields), a
    row's fields as a mapping found them (what the CLI reads from a dataset file, and the
    runner from a dict or a DataFrame's row), or any JSON-like value. Only the fields
    present count (``present_only``: a field that is None is absent), so a row hashes the
    same whichever of them brings it (see :mod:`~langchain_answer_metrics.run.records.identity`).

        >>> sample_fingerprint({"response": "A.", "reference": None})
        '...'  # the same as sample_fingerprint(Sample(response="A."))
    """
    data = sample.model_dump() if hasattr(sample, "model_dump") else sample
    if present_only and isinstance(data, Mapping):
        data = {str(key): value for key, value in data.items() if value is not None}
    payload = json.dumps(data, sort_keys=True, ensure_ascii=False, default=str)
    # surrogatepass: a text with a lone surrogate still has a stable fingerprint (the
    # metrics refuse such a sample, naming the field).
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def settings_signature(name: str, settings: Mapping[str, Any]) -> str:
    """A hash of a metric's name and the settings that change its scores."""
    payload = json.dumps({"metric": name, **settings}, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


class MetricSignature(str):
    """A metric's signature (the text a record keeps), with what its judges are, readable:
    ``judges``, each judge's model id and settings by label, which a record keeps beside
    it and a resume names when they differ.

        >>> signature = judged_signature("3a301d6350af9d4e", {"judge-a": {"temperature": 0.0}})
        >>> signature, signature.judges
        ('3a301d6350af9d4e.…', {'judge-a': {'temperature': 0.0}})
    """

    judges: dict[str, Any]

    def __new__(cls, text: str, judges: Mapping[str, Any] | None = None) -> MetricSignature:
        signature = super().__new__(cls, text)
        signature.judges = dict(judges or {})
        return signature


def judged_signature(base: str, judges: Mapping[str, Any]) -> MetricSignature:
    """``base`` (a metric's settings, labels and prompts) and a hash of what its judges
    are (model ids, sampling settings), joined by a dot: a metric's whole signature."""
    return MetricSignature(f"{base}.{settings_signature('judges', {'judges': judges})}", judges)


def same_judged_metric(saved: str, current: str) -> bool:
    """Whether a saved score's signature is this run's: equal, or, for a line written
    before judges' settings were signed (no dot), equal to its first part. Such a line
    cannot say what its judges were; it is taken as it was before."""
    if saved == current:
        return True
    return "." not in saved and saved == current.partition(".")[0]


def judges_differ(saved: str, current: str) -> bool:
    """Whether the two signatures differ only in what the judges are (same metric,
    labels, settings and prompts, other model ids or sampling settings)."""
    base, dot, judges = saved.partition(".")
    now_base, _, now_judges = current.partition(".")
    return bool(dot) and base == now_base and judges != now_judges
