"""The judge steps there are, declared as data: each step's reply schema, and the steps
added with :func:`~.prompt_set.register_step` (their :class:`StepSpec`).

Read by the prompts (:mod:`.prompt_set`, which renders and checks them), by the cost
estimate's stand-in model (which answers a step from its schema and ``dry_reply``,
never from a prompt), and by the toy judge of ``testing/`` (which answers a registered
step with the ``toy_reply`` rule the step declares beside its schema, so a new step needs
no edit in ``testing/``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from langchain_answer_metrics.judging.prompts import StepVariables
from langchain_answer_metrics.judging.schemas import AspectVerdict, ClaimList, ClaimVerdicts

if TYPE_CHECKING:  # the steps package imports the prompts, which import this module
    from langchain_answer_metrics.judging.steps.intent import StepIntent

STEP_SCHEMAS: dict[str, type[BaseModel]] = {
    "decompose_claims": ClaimList,
    "verify_claims": ClaimVerdicts,
    "judge_aspect": AspectVerdict,
}


@dataclass(frozen=True)
class StepSpec:
    """A judge step of its own, declared in one place: :func:`~.prompt_set.register_step`
    makes it a step like the built-in ones (custom prompts and examples checked against
    it, default examples, resume signatures, the cost estimate's dry run).

    Attributes:
        name: the step's name, as ``prompts={name: ...}`` and traces give it.
        schema: the reply's Pydantic schema (reason fields before the verdict).
        system: the default system instructions (end them with :data:`~.prompts.DATA_RULE`).
        user: the default user message, a template of the step's variables.
        variables: which variables the step fills (each arrives tagged and escaped).
        examples: default few-shot examples, ``{"input": {...}, "output": {...}}``.
        version: the version of the default prompt and examples: bump it when their
            wording changes, so saved scores judged under the old wording are not reused.
        dry_reply: what the cost estimate's stand-in model answers, given the step's
            :class:`~.steps.intent.StepIntent` (None outside a step); valid for ``schema``.
        toy_reply: what the toy judge (``answer-metrics toy-judge``, the local test
            server) answers, from the prompt's data sections: each tagged variable,
            un-escaped, by name. A plausible rule on easy cases, never a judgment; it
            lives beside the step, so the toy judge needs no edit to answer a new step.
            Without it the toy judge answers ``dry_reply(None)``.
        toy_marks: the tags that tell this step's prompt apart when a request names no
            schema (json_mode); default: the step's required variables.

    Example:
        >>> spec = register_step(StepSpec(
        ...     name="judge_tone", schema=ToneVerdict, system=TONE_SYSTEM,
        ...     user="{response}", variables=StepVariables(required=("response",)),
        ...     dry_reply=lambda intent: {"reason": "dry run", "tone": "neutral"},
        ...     toy_reply=lambda sections: {"reason": "toy", "tone": "neutral"},
        ... ))
    """

    name: str
    schema: type[BaseModel]
    system: str
    user: str
    variables: StepVariables
    examples: tuple[Mapping[str, Any], ...] = ()
    version: int = 1
    dry_reply: Callable[[StepIntent | None], dict[str, Any]] | None = None
    toy_reply: Callable[[Mapping[str, str]], dict[str, Any]] | None = None
    toy_marks: frozenset[str] = frozenset()

    @property
    def marks(self) -> frozenset[str]:
        """The tags that mark this step's prompt (``toy_marks``, else its required ones)."""
        return self.toy_marks or frozenset(self.variables.required)


REGISTERED_STEPS: dict[str, StepSpec] = {}
"""The steps added with :func:`~.prompt_set.register_step`, by name."""
