"""Hashes of a sample's text and of a metric's settings: plain JSON and SHA-256, so that
reading a dataset (each row's fingerprint) loads no metric."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any


def sample_fingerprint(sample: Any) -> str:
    """A hash of a sample's text: a rerun re-scores a sample whose text changed.

    ``sample`` is a :class:`~langchain_answer_metrics.core.sample.Sample` (its fields) or any
    JSON-like value (a dict as given to the runner).
    """
    data = sample.model_dump() if hasattr(sample, "model_dump") else sample
    payload = json.dumps(data, sort_keys=True, ensure_ascii=False, default=str)
    # surrogatepass: a text with a lone surrogate still has a stable fingerprint (the
    # metrics refuse such a sample, naming the field).
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def settings_signature(name: str, settings: Mapping[str, Any]) -> str:
    """A hash of a metric's name and the settings that change its scores."""
    payload = json.dumps({"metric": name, **settings}, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]
