"""What a :class:`~.custom_judge.CustomJudge` asks its judges for: the output kinds.

- :class:`PassFail`: PASS (1.0) or FAIL (0.0), what AspectCritic is;
- :class:`Scale`: an ordered scale of contiguous integer levels, each described, mapped
  linearly to [0, 1] (the lowest level 0.0, the highest 1.0);
- :class:`Categories`: labels, each with the score the user gives it in [0, 1];
- :class:`Continuous`: a score in [0, 1], taken as given.

Each kind also says how one judge's votes make its verdict (:meth:`OutputKind.decide`):
the most votes for PASS/FAIL and categories, the median level for a scale, the median
for a continuous score. A tie (and the middle pair of an even number of levels) goes to
the verdict with the lower reported score: the cautious one.

Example:
    >>> Scale(levels={1: "rambling", 2: "long", 3: "one sentence"}).judged_score(2)
    0.5
    >>> PassFail().decide(["PASS", "FAIL"])
    ('FAIL', True)
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from langchain_answer_metrics.judging.steps.custom import (
    CategoryVerdict,
    ContinuousVerdict,
    PassFailVerdict,
    ScaleVerdict,
    verdict_schema,
)

Verdict = str | int | float
"""A judge's verdict: a label (PASS/FAIL, a category), a level, or a continuous score."""


class OutputKind(BaseModel):
    """Base of the output kinds: frozen, options by keyword, unknown options refused."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str
    step: ClassVar[str]

    def reply_schema(self) -> type[BaseModel]:
        """The reply schema: reason first, then the verdict (narrowed to this kind's)."""
        raise NotImplementedError

    def choices(self) -> tuple[str | int, ...]:
        """The verdicts a judge may give, in the order the user gave them."""
        return ()

    def rubric(self) -> str | None:
        """The text of the step's rubric section (``<levels>``, ``<categories>``...)."""
        return None

    def verdict_of(self, reply: BaseModel) -> Verdict:
        value: Verdict = reply.verdict  # type: ignore[attr-defined]
        return value

    def judged_score(self, verdict: Verdict) -> float:
        """The verdict's score in [0, 1], on the judge's scale (before ``higher_is_better``)."""
        raise NotImplementedError

    def decide(
        self, votes: Sequence[Verdict], higher_is_better: bool = True
    ) -> tuple[Verdict, bool]:
        """One judge's verdict from its votes, and whether a tie decided it.

        Raises ValueError, saying so, when there is no vote to decide from.
        """
        if not votes:
            raise ValueError(
                f"{type(self).__name__}: no votes to take the majority of (a judge's "
                "verdict needs at least one vote)"
            )

        def reported(verdict: Verdict) -> float:
            judged = self.judged_score(verdict)
            return judged if higher_is_better else 1.0 - judged

        counts = Counter(votes).most_common()
        top = [verdict for verdict, count in counts if count == counts[0][1]]
        verdict = min(top, key=reported)
        return verdict, len(top) > 1


class PassFail(OutputKind):
    """PASS (the response meets the criterion: 1.0) or FAIL (0.0); votes: the majority,
    a tie FAIL (the lower score; PASS under ``higher_is_better=False``).

    Example:
        >>> PassFail().judged_score("PASS")
        1.0
    """

    kind: Literal["pass_fail"] = "pass_fail"
    step: ClassVar[str] = "judge_pass_fail"

    def reply_schema(self) -> type[BaseModel]:
        return PassFailVerdict

    def choices(self) -> tuple[str | int, ...]:
        return ("PASS", "FAIL")

    def judged_score(self, verdict: Verdict) -> float:
        return 1.0 if verdict == "PASS" else 0.0


class Scale(OutputKind):
    """An ordered scale: ``levels`` maps contiguous integers to what each level means.

    Level ``lo`` scores 0.0 and ``hi`` 1.0, linearly between; votes: the median level.

    Raises:
        ValueError: fewer than two levels, a gap (naming the missing level), or a level
            without a description.

    Example:
        >>> Scale(levels={1: "rambling", 2: "wordy", 3: "tight"}).judged_score(3)
        1.0
    """

    kind: Literal["scale"] = "scale"
    step: ClassVar[str] = "judge_scale"
    levels: dict[int, str]

    @field_validator("levels")
    @classmethod
    def _contiguous_and_described(cls, levels: dict[int, str]) -> dict[int, str]:
        if len(levels) < 2:
            raise ValueError(f"Scale: give at least two levels, got {len(levels)}")
        low, high = min(levels), max(levels)
        missing = [level for level in range(low, high + 1) if level not in levels]
        if missing:
            raise ValueError(
                f"Scale: the levels must be contiguous integers; level {missing[0]} is "
                f"missing between {low} and {high}"
            )
        for level, text in levels.items():
            if not text.strip():
                raise ValueError(f"Scale: level {level} has no description")
        return dict(sorted(levels.items()))

    def reply_schema(self) -> type[BaseModel]:
        return verdict_schema(ScaleVerdict, self.choices())

    def choices(self) -> tuple[str | int, ...]:
        return tuple(self.levels)

    def rubric(self) -> str:
        return "\n".join(f"{level}: {text.strip()}" for level, text in self.levels.items())

    def judged_score(self, verdict: Verdict) -> float:
        low, high = min(self.levels), max(self.levels)
        return (float(verdict) - low) / (high - low)

    def decide(
        self, votes: Sequence[Verdict], higher_is_better: bool = True
    ) -> tuple[Verdict, bool]:
        """The median level; of an even number, the lower-scoring of the middle two."""
        ordered = sorted(votes, key=lambda level: float(level), reverse=not higher_is_better)
        middle = ordered[(len(ordered) - 1) // 2]
        return middle, len(ordered) % 2 == 0 and middle != ordered[len(ordered) // 2]


class Categories(OutputKind):
    """Labels, each with the score in [0, 1] the user gives it; votes: the most votes.

    ``descriptions`` (optional) says what each label means, for the judge. Labels are read
    in any case.

    Raises:
        ValueError: fewer than two categories, a score outside [0, 1], a described
            category without a score, or two labels differing only in case.

    Example:
        >>> Categories(scores={"polite": 1.0, "neutral": 0.6, "rude": 0.0}).judged_score("neutral")
        0.6
    """

    kind: Literal["categories"] = "categories"
    step: ClassVar[str] = "judge_category"
    scores: dict[str, Annotated[float, Field(ge=0.0, le=1.0)]]
    descriptions: dict[str, str] = Field(default_factory=dict)

    @field_validator("scores", mode="before")
    @classmethod
    def _every_category_scored(cls, scores: Any) -> Any:
        if isinstance(scores, dict):
            for label, score in scores.items():
                if score is None:
                    raise ValueError(f"Categories: category {label!r} has no score")
        return scores

    @model_validator(mode="after")
    def _labels_checked(self) -> Categories:
        if len(self.scores) < 2:
            raise ValueError(f"Categories: give at least two categories, got {len(self.scores)}")
        seen: dict[str, str] = {}
        for label in self.scores:
            if not label.strip():
                raise ValueError("Categories: a category's name is empty")
            if label.casefold() in seen:
                raise ValueError(
                    f"Categories: {seen[label.casefold()]!r} and {label!r} differ only in case"
                )
            seen[label.casefold()] = label
        for label in self.descriptions:
            if label not in self.scores:
                raise ValueError(
                    f"Categories: category {label!r} has no score "
                    f"(scored: {', '.join(self.scores)})"
                )
        return self

    def reply_schema(self) -> type[BaseModel]:
        return verdict_schema(CategoryVerdict, self.choices())

    def choices(self) -> tuple[str | int, ...]:
        return tuple(self.scores)

    def rubric(self) -> str:
        return "\n".join(
            f"{label}: {self.descriptions[label]}" if label in self.descriptions else label
            for label in self.scores
        )

    def judged_score(self, verdict: Verdict) -> float:
        return self.scores[str(verdict)]


class Continuous(OutputKind):
    """A score in [0, 1], taken as the judge gives it; votes: the median.

    ``low`` and ``high`` say what 0 and 1 mean, for the judge.

    Example:
        >>> Continuous().judged_score(0.25)
        0.25
    """

    kind: Literal["continuous"] = "continuous"
    step: ClassVar[str] = "judge_continuous"
    low: str = Field(default="does not meet the criterion at all", min_length=1)
    high: str = Field(default="fully meets the criterion", min_length=1)

    def reply_schema(self) -> type[BaseModel]:
        return ContinuousVerdict

    def rubric(self) -> str:
        return f"0: {self.low}\n1: {self.high}"

    def verdict_of(self, reply: BaseModel) -> Verdict:
        value: float = reply.score  # type: ignore[attr-defined]
        return value

    def judged_score(self, verdict: Verdict) -> float:
        return float(verdict)

    def decide(
        self, votes: Sequence[Verdict], higher_is_better: bool = True
    ) -> tuple[Verdict, bool]:
        return float(statistics.median(float(vote) for vote in votes)), False


OutputKinds = Annotated[PassFail | Scale | Categories | Continuous, Field(discriminator="kind")]
"""Any output kind; as a dict, told apart by ``kind`` (``{"kind": "scale", "levels": ...}``)."""


def verdict_reason(
    verdict: Verdict, votes: Sequence[Verdict], reasons: list[str], tie: bool
) -> str:
    """One judge's reason: ``verdict (votes ...): the reason of the vote closest to it``.

    Example:
        >>> verdict_reason(4, [4, 3, 4], ["tight", "long", "short"], False)
        '4 (votes: 4, 3, 4): tight'
    """
    closest = min(
        range(len(votes)),
        key=lambda i: (
            abs(float(votes[i]) - float(verdict))
            if isinstance(verdict, (int, float))
            else float(votes[i] != verdict)
        ),
    )
    split = ""
    if len(votes) > 1:
        split = f" (votes: {', '.join(str(vote) for vote in votes)}"
        split += "; a tie, so the lower-scoring verdict)" if tie else ")"
    return f"{verdict}{split}: {reasons[closest]}"
