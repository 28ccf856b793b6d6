"""AgentGoalAccuracy: did the agent achieve the user's goal?

**The method.** Each judge reads the user's goal and the agent's whole trajectory, tool
calls and tool results included, numbered step by step (step ``judge_agent_goal``,
:mod:`~langchain_answer_metrics.judging.steps.agent_goal`), and answers, reason first,
PASS or FAIL. With a ``reference`` (the expected outcome, in words) it also compares the
agent's outcome with it. Each judge votes ``strictness`` times (one request with ``n``
choices where the model allows it); its verdict is the majority, a tie FAIL, and PASS
scores 1.0. The panel's scores are aggregated (mean by default)::

    judge score = 1.0 if most of its votes are PASS else 0.0
    score       = the panel's aggregation of the judge scores

**Why the whole trajectory.** RAGAS's AgentGoalAccuracy first has a model infer the end
state from the conversation, then compares. Judging from the final answer alone misses an
agent that *says* it booked a table while its tool call failed; the tool results are what
really happened, so the judge sees them (cut to a budget: ``tool_result_chars`` each,
``max_trajectory_chars`` in all, the cut named in the details).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from langchain_core.runnables import RunnableConfig
from pydantic import Field

from langchain_answer_metrics.agents import AgentSample
from langchain_answer_metrics.core.result import DetailsModel
from langchain_answer_metrics.core.sample import Sample
from langchain_answer_metrics.judging.judges import Judge
from langchain_answer_metrics.judging.panel import ModelOutcome
from langchain_answer_metrics.judging.steps.agent_goal import STEP, judge_agent_goal
from langchain_answer_metrics.judging.trajectory_text import ShownTrajectory
from langchain_answer_metrics.metrics.judge_outputs import PassFail
from langchain_answer_metrics.metrics.judged_agents import (
    AgentJudgeModelDetails,
    JudgedAgentMetric,
    spent,
    vote_split,
)


class AgentGoalAccuracyDetails(DetailsModel):
    """An AgentGoalAccuracy result's details: the votes per judge, whether an expected
    outcome was compared, and what the judges were shown of the trajectory."""

    kind: Literal["agent_goal_accuracy"] = "agent_goal_accuracy"
    strictness: int = 1
    with_reference: bool = False
    trajectory: ShownTrajectory | None = None
    models: dict[str, AgentJudgeModelDetails] = Field(default_factory=dict)


class AgentGoalAccuracy(JudgedAgentMetric):
    """Judge whether an agent achieved the user's goal, from its whole trajectory.

    Takes an :class:`~langchain_answer_metrics.AgentSample` (or a dict of its fields):
    ``messages`` in any of the three forms; the goal is ``user_input``, else the first
    human message; ``reference`` (optional) is the expected outcome, in words.

    Attributes:
        llm: the judges: a chat model or :class:`Judge`, or a list of them (a panel).
        strictness: votes per judge (1 to 5); its verdict is the majority, a tie FAIL.
        tool_result_chars: the most characters of one tool result the judge sees.
        max_trajectory_chars: the most characters of the whole trajectory it sees.
        prompts: ``{"judge_agent_goal": template or instructions}`` (a template uses
            ``{goal}``, ``{trajectory}`` and optionally ``{expected_outcome}``).
        examples: ``{"judge_agent_goal": [{"input": {...}, "output": {...}}]}``.

    Other options (``threshold``, ``aggregation`` ...) are every metric's.

    Raises:
        InvalidSampleError: from ``invoke``, before any request: no ``messages``, a
            message or call that cannot be read (naming where), or no goal.

    Example:
        >>> metric = AgentGoalAccuracy(llm=ChatOpenAI(model="gpt-4o-mini"))
        >>> metric.invoke({"messages": [
        ...     {"role": "user", "content": "Weather in Paris?"},
        ...     {"role": "assistant", "content": "It is 18 °C and sunny in Paris."}],
        ...     "reference": "The user learns the weather in Paris."}).score
        1.0
    """

    metric_key: ClassVar[str] = "agent_goal_accuracy"
    prompt_steps: ClassVar[tuple[str, ...]] = (STEP,)

    def labelled_example(
        self, sample: Sample, *, passed: bool, label: bool | float, reason: str
    ) -> tuple[str, dict[str, Any]]:
        assert isinstance(sample, AgentSample)  # check_sample made it one
        verdict = "PASS" if passed else "FAIL"
        given = {"goal": sample.user_input, "trajectory": self.example_trajectory(sample.messages)}
        if (sample.reference or "").strip():
            given["expected_outcome"] = sample.reference
        reason = reason or f"A human reviewer judged that the agent's outcome is a {verdict}."
        return STEP, {"input": given, "output": {"reason": reason, "verdict": verdict}}

    def _details(self, models: dict[str, dict[str, Any]]) -> AgentGoalAccuracyDetails:
        shown = self.view()
        return AgentGoalAccuracyDetails(
            strictness=self.strictness,
            with_reference=bool((shown.sample.reference or "").strip()),
            trajectory=shown.trajectory.view,
            models=models,
        )

    async def _score_with(
        self, judge: Judge, sample: Sample, config: RunnableConfig
    ) -> ModelOutcome:
        shown = self.view()
        assert shown.sample.user_input is not None  # check_sample refused a sample without
        votes = await judge_agent_goal(
            judge,
            goal=shown.sample.user_input,
            trajectory=shown.trajectory.text,
            expected_outcome=shown.sample.reference,
            votes=self.strictness,
            prompt=self._step_prompts()[STEP],
            config=config,
        )
        verdicts: list[str] = [vote.parsed.verdict for vote in votes]
        verdict, tie = PassFail().decide(verdicts)
        reasons = [vote.parsed.reason for vote in votes]
        deciding = reasons[verdicts.index(str(verdict))]
        details = AgentJudgeModelDetails(
            verdict=str(verdict), votes=list(verdicts), reasons=reasons, tie=tie
        )
        return ModelOutcome(
            score=1.0 if verdict == "PASS" else 0.0,
            details=dict(details),
            reason=f"{verdict}{vote_split(verdicts)}: {deciding}",
            usage=spent(votes),
        )


__all__ = ["AgentGoalAccuracy", "AgentGoalAccuracyDetails"]
