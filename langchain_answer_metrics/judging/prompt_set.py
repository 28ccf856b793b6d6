"""A metric's prompts: each step's template (the default or the user's) and its examples.

A user's prompt for a step is a ``ChatPromptTemplate``, or a string that replaces the
default system instructions (kept word for word, with
:data:`~langchain_answer_metrics.judging.prompts.DATA_RULE` appended so the judge knows
how the data is escaped). A template is checked when the metric is built: it must use the
step's required variables and no variable the step does not supply
(:data:`~langchain_answer_metrics.judging.prompts.STEP_VARIABLES`). Values always arrive
tagged and escaped, so a template cannot put judged text outside its tags.

Few-shot examples are rendered one fixed way, between the template's messages and its
last one: per example, a user message holding the example's input (each variable tagged
and escaped like real data, in the step's variable order, blank lines between) and an
assistant message holding the expected output as JSON of the step's schema. Everything
before the data message is the same for every request of a step, so providers' prompt
caching can discount it.

A step with its default prompt gets the default examples
(:data:`~langchain_answer_metrics.judging.default_examples.DEFAULT_EXAMPLES`: short, in
English, Russian and Chinese). A user's examples for a step replace them, and so does a
user's prompt for the step (the defaults illustrate the default rules); ``examples={step:
[]}`` sends none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.prompts import ChatPromptTemplate
from pydantic import BaseModel, ValidationError

from langchain_answer_metrics.judging import prompts
from langchain_answer_metrics.judging.default_examples import DEFAULT_EXAMPLES
from langchain_answer_metrics.judging.step_specs import REGISTERED_STEPS, STEP_SCHEMAS, StepSpec

# How a few-shot example's user message starts: what tells it apart from the data.
EXAMPLE_INPUT = "Example input:"


SECTIONS_LEFT_OUT_WHEN_ABSENT = ("question", "expected_outcome", "reference_trajectory")
"""Optional variables that render as nothing when absent (others as an empty tag), and as
their tagged value on a line of their own after the one before when given."""


class PromptError(ValueError):
    """A custom prompt or example that does not fit its step; names the step."""


def step_values(step: str, raw: Mapping[str, Any]) -> dict[str, str]:
    """The step's variables, tagged and escaped, from raw values (absent ones empty)."""
    values: dict[str, str] = {}
    for name in prompts.STEP_VARIABLES[step].allowed:
        value = raw.get(name)
        if name == "question":
            values[name] = prompts.optional_question(value)
        elif name in SECTIONS_LEFT_OUT_WHEN_ABSENT:
            given = value is not None and str(value).strip()
            values[name] = "\n" + prompts.tag(name, str(value)) if given else ""
        elif name == "count":
            values[name] = str(value if value is not None else len(raw.get("claims") or []))
        elif name == "claims":
            claims = [value] if isinstance(value, str) else list(value or [])
            values[name] = prompts.tag("claims", prompts.number_claims(claims))
        elif name == "source":
            sources = [value] if isinstance(value, str) else [str(s) for s in value or ()]
            values[name] = prompts.source_section(sources)
        else:
            values[name] = prompts.tag(name, str(value if value is not None else ""))
    return values


def as_template(owner: str, step: str, value: Any) -> ChatPromptTemplate:
    """``value`` (a template or system instructions) as a checked template for ``step``."""
    if step not in prompts.STEP_VARIABLES:
        raise PromptError(f"{owner}: there is no step {step!r} to prompt")
    if isinstance(value, str):
        if not value.strip():
            raise PromptError(f"{owner}: the prompt for {step} is empty")
        default = prompts.DEFAULT_PROMPTS[step]
        system = SystemMessage(f"{value.rstrip()}\n\n{prompts.DATA_RULE}")
        return ChatPromptTemplate.from_messages([system, *default.messages[1:]])
    if not isinstance(value, ChatPromptTemplate):
        raise PromptError(
            f"{owner}: the prompt for {step} must be a ChatPromptTemplate or a string, "
            f"got {type(value).__name__}"
        )
    variables = prompts.STEP_VARIABLES[step]
    used = set(value.input_variables) | set(value.optional_variables)
    for name in variables.required:
        if name not in used:
            raise PromptError(
                f"{owner}: the prompt for {step} lacks the required variable {{{name}}} "
                f"(it uses {', '.join(sorted(used)) or 'none'})"
            )
    for name in sorted(used):
        if name not in variables.allowed:
            raise PromptError(
                f"{owner}: the prompt for {step} names the unknown variable {{{name}}}; "
                f"{step} supplies {', '.join(variables.allowed)}"
            )
    return value


@dataclass(frozen=True)
class FewShotExample:
    """One example for a step: its input values and the expected structured output."""

    input: Mapping[str, Any]
    output: BaseModel

    def messages(self, step: str) -> list[BaseMessage]:
        values = step_values(step, self.input)
        shown = [
            values[name]
            for name in prompts.STEP_VARIABLES[step].allowed
            if name in self.input and name != "count"
        ]
        return [
            HumanMessage(f"{EXAMPLE_INPUT}\n\n" + "\n\n".join(v.strip("\n") for v in shown)),
            AIMessage(prompts.json_for_prompt(self.output.model_dump(mode="json"))),
        ]


def as_example(owner: str, step: str, value: Any) -> FewShotExample:
    if isinstance(value, FewShotExample):
        return value
    if not isinstance(value, Mapping) or set(value) != {"input", "output"}:
        raise PromptError(
            f"{owner}: an example for {step} is a dict with 'input' and 'output', got {value!r}"
        )
    given = value["input"]
    variables = prompts.STEP_VARIABLES[step]
    if not isinstance(given, Mapping):
        raise PromptError(f"{owner}: an example's input for {step} must be a dict")
    for name in variables.required:
        if name not in given:
            raise PromptError(f"{owner}: an example for {step} lacks the variable {name!r}")
    for name in given:
        if name not in variables.allowed:
            raise PromptError(
                f"{owner}: an example for {step} names the unknown variable {name!r}; "
                f"{step} supplies {', '.join(variables.allowed)}"
            )
    schema = STEP_SCHEMAS[step]
    try:
        output = schema.model_validate(value["output"])
    except ValidationError as error:
        raise PromptError(
            f"{owner}: an example's output for {step} is not a {schema.__name__}: {error}"
        ) from None
    return FewShotExample(input=dict(given), output=output)


@dataclass(frozen=True)
class StepPrompt:
    """What one step sends: its template and its few-shot examples."""

    template: ChatPromptTemplate
    examples: tuple[FewShotExample, ...] = field(default=())

    def messages(self, step: str, raw: Mapping[str, Any]) -> list[BaseMessage]:
        values = step_values(step, raw)
        used = set(self.template.input_variables) | set(self.template.optional_variables)
        rendered = self.template.format_messages(
            **{name: value for name, value in values.items() if name in used}
        )
        shots = [message for example in self.examples for message in example.messages(step)]
        return [*rendered[:-1], *shots, rendered[-1]] if shots else rendered


DEFAULT_STEP_EXAMPLES: dict[str, tuple[FewShotExample, ...]] = {
    step: tuple(as_example("default examples", step, example) for example in examples)
    for step, examples in DEFAULT_EXAMPLES.items()
}

DEFAULT_STEP_PROMPTS = {
    step: StepPrompt(template, DEFAULT_STEP_EXAMPLES.get(step, ()))
    for step, template in prompts.DEFAULT_PROMPTS.items()
}

BUILTIN_STEPS = tuple(prompts.DEFAULT_PROMPTS)
"""The steps whose default prompts :data:`~.prompts.PROMPT_VERSION` versions."""


def register_step(spec: StepSpec) -> StepSpec:
    """Add ``spec``'s step beside the built-in ones (registering the same spec again is a
    no-op). Raises PromptError if the name is taken, or its examples do not fit it."""
    known = REGISTERED_STEPS.get(spec.name)
    if known == spec:
        return spec
    if known is not None or spec.name in BUILTIN_STEPS:
        raise PromptError(f"there is already a step {spec.name!r}")
    template = ChatPromptTemplate.from_messages([SystemMessage(spec.system), ("human", spec.user)])
    prompts.STEP_VARIABLES[spec.name] = spec.variables
    STEP_SCHEMAS[spec.name] = spec.schema
    try:
        as_template(f"step {spec.name}", spec.name, template)
        examples = tuple(as_example(f"step {spec.name}", spec.name, e) for e in spec.examples)
    except PromptError:
        del prompts.STEP_VARIABLES[spec.name], STEP_SCHEMAS[spec.name]
        raise
    prompts.DEFAULT_PROMPTS[spec.name] = template
    DEFAULT_STEP_EXAMPLES[spec.name] = examples
    DEFAULT_STEP_PROMPTS[spec.name] = StepPrompt(template, examples)
    REGISTERED_STEPS[spec.name] = spec
    return spec


def _examples_of(
    owner: str, step: str, custom: Mapping[str, Any], given: Mapping[str, Sequence[Any]]
) -> tuple[FewShotExample, ...]:
    """The user's examples for ``step``; else the defaults, unless its prompt is the user's."""
    if step in given:
        return tuple(as_example(owner, step, example) for example in given[step])
    return () if step in custom else DEFAULT_STEP_EXAMPLES.get(step, ())


def step_prompts(
    owner: str,
    steps: Sequence[str],
    custom: Mapping[str, Any] | None,
    examples: Mapping[str, Sequence[Any]] | Sequence[Any] | None,
) -> dict[str, StepPrompt]:
    """The checked prompts of ``steps``: defaults (with their default examples),
    replaced by ``custom`` and ``examples`` where given."""
    custom = dict(custom or {})
    for step in custom:
        if step not in steps:
            raise PromptError(
                f"{owner}: there is no step {step!r} to prompt; its steps are {', '.join(steps)}"
            )
    if examples is None:
        by_step: dict[str, Sequence[Any]] = {}
    elif isinstance(examples, Mapping):
        by_step = dict(examples)
    elif len(steps) == 1:
        by_step = {steps[0]: list(examples)}
    else:
        raise PromptError(
            f"{owner}: examples are given per step, as {{step: [examples]}} "
            f"(steps: {', '.join(steps)})"
        )
    for step in by_step:
        if step not in steps:
            raise PromptError(
                f"{owner}: there is no step {step!r} for examples; its steps are {', '.join(steps)}"
            )
    return {
        step: StepPrompt(
            as_template(owner, step, custom[step])
            if step in custom
            else prompts.DEFAULT_PROMPTS[step],
            _examples_of(owner, step, custom, by_step),
        )
        for step in steps
    }
