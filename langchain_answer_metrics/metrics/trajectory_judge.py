"""TrajectoryJudge: is the agent's trajectory a sensible and efficient path to the goal?

**The method.** Each judge reads the user's task and the agent's trajectory, numbered
step by step (messages, tool calls with their arguments, tool results), and, reason
first, names the first step at fault (``faulted_step``) and gives its verdict (steps
``judge_trajectory`` and ``judge_trajectory_scale``,
:mod:`~langchain_answer_metrics.judging.steps.trajectory`). With a reference trajectory
(``reference_messages``, or ``reference_tool_calls`` shown as the calls an assistant
makes) it also compares the path with that one good path.

The verdict is PASS/FAIL by default (:class:`~.judge_outputs.PassFail`: the majority of
``strictness`` votes, a tie FAIL) or a level of a :class:`~.judge_outputs.Scale`
(``output=Scale(levels={...})``, or ``output="scale"`` for :data:`DEFAULT_LEVELS`: the
median vote, scored linearly from 0 at the lowest level to 1 at the highest), as for a
:class:`~.custom_judge.CustomJudge`. The panel's scores are aggregated (mean by default).

**Why a judge.** TrajectoryMatch and ToolCallF1 compare calls with expected ones, which
needs a reference and cannot say whether a different path was as good, or whether a tool
result was misread. A judge can, and says where: its reason names the step.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from langchain_core.runnables import RunnableConfig
from pydantic import Field, TypeAdapter, ValidationError, field_validator, model_validator

from langchain_answer_metrics.agents import AgentSample
from langchain_answer_metrics.core.result import DetailsModel
from langchain_answer_metrics.core.sample import Sample
from langchain_answer_metrics.judging.judges import Judge
from langchain_answer_metrics.judging.panel import ModelOutcome
from langchain_answer_metrics.judging.prompt_set import step_prompts
from langchain_answer_metrics.judging.steps.custom import verdict_schema
from langchain_answer_metrics.judging.steps.trajectory import (
    PASS_FAIL_STEP,
    SCALE_STEP,
    TrajectoryScaleVerdict,
    TrajectoryVerdict,
    judge_trajectory,
)
from langchain_answer_metrics.judging.trajectory_text import ShownTrajectory
from langchain_answer_metrics.metrics.custom_judge import ByInstance
from langchain_answer_metrics.metrics.judge_outputs import PassFail, Scale
from langchain_answer_metrics.metrics.judged_agents import (
    AgentJudgeModelDetails,
    JudgedAgentMetric,
    SampleView,
    spent,
    vote_split,
)
from langchain_answer_metrics.metrics.settings import (
    TRAJECTORY_OUTPUT_SETTING as TRAJECTORY_OUTPUT_SETTING,
)

DEFAULT_LEVELS: dict[int, str] = {
    1: "The path cannot reach the task: wrong tools, or tool results misused.",
    2: "A major fault: a needed call missing, made-up arguments, or a result misread.",
    3: "It reaches the task, with needless or repeated calls.",
    4: "A good path with one minor inefficiency.",
    5: "The right tools with fitting arguments, no needless step, every result used correctly.",
}
"""The scale of ``output="scale"``: 1 (the path fails the task) to 5 (a clean path)."""

TrajectoryOutput = Annotated[PassFail | Scale, Field(discriminator="kind")]
_OUTPUT: TypeAdapter[PassFail | Scale] = TypeAdapter(TrajectoryOutput)


def _output(value: Any) -> Any:
    """``"pass_fail"`` and ``"scale"`` (with :data:`DEFAULT_LEVELS`) as output kinds."""
    if value == "pass_fail":
        return PassFail()
    if value == "scale":
        return Scale(levels=DEFAULT_LEVELS)
    if isinstance(value, str):
        raise ValueError(f"TrajectoryJudge: output {value!r} is not 'pass_fail' or 'scale'")
    return value


def _step_of(output: PassFail | Scale) -> str:
    return SCALE_STEP if isinstance(output, Scale) else PASS_FAIL_STEP


class TrajectoryJudgeDetails(DetailsModel):
    """A TrajectoryJudge result's details: the output kind, the votes and faulted steps
    per judge, and what the judges were shown of the trajectory and of the reference."""

    absent_when_none = frozenset({"reference", "reference_trajectory"})
    kind: Literal["trajectory_judge"] = "trajectory_judge"
    output: str = "pass_fail"
    strictness: int = 1
    reference: str | None = None
    trajectory: ShownTrajectory | None = None
    reference_trajectory: ShownTrajectory | None = None
    models: dict[str, AgentJudgeModelDetails] = Field(default_factory=dict)


class TrajectoryJudge(JudgedAgentMetric):
    """Judge whether an agent's trajectory is a sensible, efficient path to the task.

    Takes an :class:`~langchain_answer_metrics.AgentSample` (or a dict of its fields):
    ``messages`` in any of the three forms; the task is ``user_input``, else the first
    human message; ``reference_messages`` or ``reference_tool_calls`` (optional) a
    reference path. The reason names the step at fault; the details hold its number.

    Attributes:
        llm: the judges: a chat model or :class:`Judge`, or a list of them (a panel).
        output: :class:`PassFail` (default) or :class:`Scale` (``levels={n: "meaning"}``),
            or ``"scale"`` for :data:`DEFAULT_LEVELS` (1 to 5).
        strictness: votes per judge (1 to 5): the majority for PASS/FAIL (a tie FAIL),
            the median level for a scale.
        tool_result_chars: the most characters of one tool result the judge sees.
        max_trajectory_chars: the most characters of the trajectory it sees (the reference
            path gets half as many again).
        prompts: ``{"judge_trajectory": ...}`` (or ``"judge_trajectory_scale"``): a template
            using ``{task}``, ``{trajectory}``, optionally ``{reference_trajectory}`` (and
            the scale's ``{levels}``), or system instructions.
        examples: few-shot examples for the step.

    Raises:
        InvalidSampleError: from ``invoke``, before any request: no ``messages``, a
            message or call that cannot be read (naming where), or no task.

    Example:
        >>> judge = TrajectoryJudge(llm=ChatOpenAI(model="gpt-4o-mini"))
        >>> result = judge.invoke({"messages": repeated_weather_calls})
        >>> result.score, result.details.models["gpt-4o-mini"].faulted_step
        (0.0, 4)
    """

    metric_key: ClassVar[str] = "trajectory_judge"
    prompt_steps = ByInstance[tuple[str, ...]](
        (PASS_FAIL_STEP,), lambda metric: (_step_of(metric.output),)
    )

    output: TrajectoryOutput = Field(default_factory=PassFail)

    @field_validator("output", mode="before")
    @classmethod
    def _named_output(cls, value: Any) -> Any:
        return _output(value)

    @model_validator(mode="before")
    @classmethod
    def _prompts_checked(cls, data: Any) -> Any:
        """The output kind's step: its template (default or the user's) and examples."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        try:
            output = _OUTPUT.validate_python(_output(data.get("output", PassFail())))
        except (ValidationError, ValueError):
            return {**data, "prompts": {}, "examples": {}}  # the field reports it
        step = _step_of(output)
        checked = step_prompts(cls.__name__, (step,), data.get("prompts"), data.get("examples"))
        data["prompts"] = {step: checked[step].template}
        data["examples"] = {step: list(checked[step].examples)} if checked[step].examples else {}
        return data

    def labelled_example(
        self, sample: Sample, *, passed: bool, label: bool | float, reason: str
    ) -> tuple[str, dict[str, Any]]:
        assert isinstance(sample, AgentSample)  # check_sample made it one
        output = self.output
        given: dict[str, Any] = {
            "task": sample.user_input,
            "trajectory": self.example_trajectory(sample.messages),
        }
        expected = self.expected_messages(sample)
        if expected is not None:
            given["reference_trajectory"] = self.example_trajectory(expected)
        verdict: str | int = "PASS" if passed else "FAIL"
        if isinstance(output, Scale):
            given["levels"] = output.rubric()
            wanted = float(label) if not isinstance(label, bool) else float(passed)
            verdict = min(output.levels, key=lambda level: abs(output.judged_score(level) - wanted))
        reason = reason or f"A human reviewer judged this path {verdict}."
        example = {"reason": reason, "faulted_step": None, "verdict": verdict}
        return _step_of(output), {"input": given, "output": example}

    def _shown(self, sample: AgentSample) -> SampleView:
        return SampleView(sample, self.rendered(sample), self.reference_path(sample))

    def _details(self, models: dict[str, dict[str, Any]]) -> TrajectoryJudgeDetails:
        shown = self.view()
        return TrajectoryJudgeDetails(
            output=self.output.kind,
            strictness=self.strictness,
            reference=shown.reference.source if shown.reference else None,
            trajectory=shown.trajectory.view,
            reference_trajectory=shown.reference.rendered.view if shown.reference else None,
            models=models,
        )

    async def _score_with(
        self, judge: Judge, sample: Sample, config: RunnableConfig
    ) -> ModelOutcome:
        shown, output = self.view(), self.output
        step = _step_of(output)
        scale = isinstance(output, Scale)
        assert shown.sample.user_input is not None  # check_sample refused a sample without
        votes = await judge_trajectory(
            judge,
            task=shown.sample.user_input,
            trajectory=shown.trajectory.text,
            reference_trajectory=shown.reference.rendered.text if shown.reference else None,
            levels=output.rubric() if isinstance(output, Scale) else None,
            choices=tuple(str(choice) for choice in output.choices()),
            schema=verdict_schema(TrajectoryScaleVerdict, output.choices())
            if scale
            else TrajectoryVerdict,
            step=step,
            prompt=self._step_prompts()[step],
            votes=self.strictness,
            config=config,
        )
        verdicts: list[str | int] = [vote.parsed.verdict for vote in votes]
        decided, tie = output.decide(verdicts)
        verdict = int(decided) if scale else str(decided)
        deciding = votes[verdicts.index(verdict)].parsed
        faulted: list[int | None] = [vote.parsed.faulted_step for vote in votes]
        reasons = [str(vote.parsed.reason) for vote in votes]
        details = AgentJudgeModelDetails(
            verdict=verdict,
            votes=verdicts,
            reasons=reasons,
            faulted_step=deciding.faulted_step,
            faulted_steps=faulted,
            tie=tie,
        )
        split = vote_split(verdicts)
        return ModelOutcome(
            score=output.judged_score(verdict),
            details=dict(details),
            reason=f"{verdict}{split}: {deciding.reason}",
            usage=spent(votes),
        )


__all__ = [
    "DEFAULT_LEVELS",
    "TRAJECTORY_OUTPUT_SETTING",
    "TrajectoryJudge",
    "TrajectoryJudgeDetails",
]
