"""Band names of your own, for a :class:`~.custom_judge.CustomJudge`'s results.

``bands`` maps each band's name to the lowest reported score it holds; a score falls in
the band with the highest lower bound it reaches (``score >= low``, the comparison the
threshold uses, so a band starting at the threshold and ``passed`` agree). One band must
start at 0.0, so every score has one. Bands read the reported score, where 1.0 is best
even under ``higher_is_better=False``. Without ``bands``, a result's band is one of the
built-in four (:func:`~langchain_answer_metrics.core.result.band_for`).

Example:
    >>> bands = checked_bands("CustomJudge('conciseness')",
    ...                       {"wordy": 0.0, "concise": 0.8, "acceptable": 0.5})
    >>> bands
    {'concise': 0.8, 'acceptable': 0.5, 'wordy': 0.0}
    >>> band_named(bands, 0.5), band_named(bands, 0.49)
    ('acceptable', 'wordy')
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = ["band_named", "checked_bands"]

_SHAPE = "a mapping of band name -> lowest score, e.g. {'good': 0.7, 'poor': 0.0}"


def checked_bands(owner: str, bands: Any) -> dict[str, float] | None:
    """``bands`` checked, highest band first; ``None`` stays ``None`` (the built-in bands).

    Raises:
        ValueError: naming ``owner``: not a non-empty mapping, an empty name, two names
            differing only in case, a lower bound that is not a number in [0, 1], two bands
            starting at the same score, or no band starting at 0.0.

    Example:
        >>> checked_bands("CustomJudge('tone')", {"warm": 0.5, "cold": 0.0})
        {'warm': 0.5, 'cold': 0.0}
    """
    if bands is None:
        return None
    if not isinstance(bands, Mapping) or not bands:
        raise ValueError(f"{owner}: bands must be {_SHAPE}")
    names: dict[str, str] = {}
    starts: dict[float, str] = {}
    for name, low in bands.items():
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"{owner}: bands: a band's name is empty ({_SHAPE})")
        if name.strip().casefold() in names:
            raise ValueError(
                f"{owner}: bands: {names[name.strip().casefold()]!r} and {name!r} differ only "
                "in case or spaces; give each band its own name"
            )
        names[name.strip().casefold()] = name
        if isinstance(low, bool) or not isinstance(low, (int, float)):
            raise ValueError(f"{owner}: bands: {name!r}: its lowest score is not a number")
        if not math.isfinite(low) or not 0.0 <= low <= 1.0:
            raise ValueError(f"{owner}: bands: {name!r} starts at {low}, not in [0, 1]")
        if float(low) in starts:
            raise ValueError(
                f"{owner}: bands: {starts[float(low)]!r} and {name!r} both start at {low}; "
                "the one listed second could never be a result's band"
            )
        starts[float(low)] = name.strip()
    if 0.0 not in starts:
        raise ValueError(
            f"{owner}: bands: no band starts at 0.0, so a score below {min(starts)} would have "
            "none; add the lowest band, e.g. 'poor': 0.0"
        )
    return {starts[low]: low for low in sorted(starts, reverse=True)}


def band_named(bands: Mapping[str, float], score: float) -> str:
    """The name of the band ``score`` falls in (``bands`` as :func:`checked_bands` gives).

    Example:
        >>> band_named({"safe": 0.8, "risky": 0.0}, 0.8)
        'safe'
    """
    return max((low, name) for name, low in bands.items() if score >= low)[1]
