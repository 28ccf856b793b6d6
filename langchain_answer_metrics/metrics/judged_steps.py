"""The steps the judges of a judged agent metric (AgentGoalAccuracy, TrajectoryJudge)
fault, on the trajectory's outline: what the report shows of them.

A vote faults the step it names in ``faulted_step`` (TrajectoryJudge asks for it); a FAIL
without one faults the steps its reason names ("Step 4 repeats the call of step 2"). A
passing vote's reason may cite steps too: they are marked as cited, not as faults. The
outline is the one the metric kept in its details
(:class:`~langchain_answer_metrics.judging.trajectory_text.ShownTrajectory`); a faulted
step outside it is listed anyway, by its number.

    >>> steps_named("Step 4 repeats the call of step 2; steps 5 and 6 are needless.")
    [4, 2, 5, 6]
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from langchain_answer_metrics.metrics.judged_agents import AgentJudgeModelDetails

__all__ = ["JudgedStep", "JudgedSteps", "StepFault", "judged_steps_of", "steps_named"]

_STEPS = re.compile(r"\bsteps?\s*\[?(\d+)\]?((?:\s*(?:,|and|&|or|to|-|–)\s*\[?\d+\]?)*)", re.I)


def steps_named(reason: str) -> list[int]:
    """The step numbers ``reason`` names ("step 4", "steps 2 and 5", "[3]"), in order."""
    found: list[int] = []
    for match in _STEPS.finditer(reason):
        for number in (match.group(1), *re.findall(r"\d+", match.group(2))):
            if int(number) not in found:
                found.append(int(number))
    return found


class StepFault(BaseModel):
    """One vote's word on a step: the model, which vote (1-based), its verdict and reason;
    ``cited`` when the vote passed and its reason only names the step."""

    model: str
    vote: int
    verdict: str
    reason: str
    cited: bool = False


class JudgedStep(BaseModel):
    """A step of the outline (``text`` empty for a faulted step outside it) and what the
    votes say of it."""

    number: int
    text: str = ""
    faults: list[StepFault] = Field(default_factory=list)


class JudgedSteps(BaseModel):
    """The trajectory's outline with the faulted steps marked; ``steps`` counts the whole
    trajectory's (the outline may keep fewer)."""

    steps: int
    outline: list[JudgedStep] = Field(default_factory=list)


def _faults(model: str, details: AgentJudgeModelDetails) -> dict[int, list[StepFault]]:
    """By step number: what each vote of ``model`` says of the steps."""
    said: dict[int, list[StepFault]] = {}
    faulted = details.faulted_steps or [details.faulted_step] * len(details.votes)
    for index, verdict in enumerate(details.votes):
        reason = details.reasons[index] if index < len(details.reasons) else ""
        structured = faulted[index] if index < len(faulted) else None
        failing = verdict == "FAIL" or structured is not None
        numbers = [structured] if structured is not None else steps_named(reason)
        for number in numbers:
            fault = StepFault(
                model=model, vote=index + 1, verdict=str(verdict), reason=reason, cited=not failing
            )
            said.setdefault(number, []).append(fault)
    return said


def judged_steps_of(details: Any) -> JudgedSteps | None:
    """The outline of a judged agent metric's details with each judge's faults marked;
    None for other details, or details kept before the outline was.

    Read by shape (a ``trajectory`` with an ``outline``, ``models`` with ``votes``), so
    the records read it without loading the metrics' Runnable machinery.
    """
    shown: Any = getattr(details, "trajectory", None)
    models: Mapping[str, Any] = getattr(details, "models", None) or {}
    if not getattr(shown, "outline", None) or not isinstance(models, Mapping):
        return None
    said: dict[int, list[StepFault]] = {}
    for model, model_details in models.items():
        if hasattr(model_details, "votes") and hasattr(model_details, "faulted_step"):
            for number, faults in _faults(model, model_details).items():
                said.setdefault(number, []).extend(faults)
    steps = {line.number: JudgedStep(number=line.number, text=line.text) for line in shown.outline}
    for number, faults in said.items():
        if 1 <= number <= shown.steps:  # a number past the trajectory names no step
            steps.setdefault(number, JudgedStep(number=number)).faults.extend(faults)
    return JudgedSteps(steps=shown.steps, outline=[steps[n] for n in sorted(steps)])
