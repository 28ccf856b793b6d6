"""What the metrics that ask each judge for several votes (``strictness``) share."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

from langchain_answer_metrics.judging.judges import Judge


def warn_if_votes_will_agree(
    owner: str, judges: Sequence[Judge], strictness: int, *, stacklevel: int = 5
) -> None:
    """Warn for each judge at temperature 0 that its ``strictness`` votes will likely all
    agree: the same prompt at temperature 0 gives the same answer, so the votes add cost,
    not independence. ``stacklevel`` 5 names the line that built the metric (through its
    ``model_post_init`` and the pydantic and LangChain ``__init__``).

    Example:
        >>> warn_if_votes_will_agree("AspectCritic 'brief'", critic.llm, 3)  # warns at T=0
    """
    if strictness < 2:
        return
    for judge in judges:
        if getattr(judge.model, "temperature", None) == 0:
            warnings.warn(
                f"{owner}: strictness={strictness} with temperature 0 on {judge.label}; "
                "the votes will likely all agree. Raise the temperature for independent "
                "votes.",
                stacklevel=stacklevel,
            )
