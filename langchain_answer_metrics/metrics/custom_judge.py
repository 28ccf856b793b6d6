"""CustomJudge: a judged metric from a criterion or a prompt, in one call.

Each judge votes ``strictness`` times; the output kind (:mod:`.judge_outputs`) turns its
votes into one verdict and the verdict into that judge's score in [0, 1]; the panel's
scores are aggregated as for every metric (mean by default).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Generic, Literal, TypeVar, overload

from langchain_core.messages import SystemMessage
from langchain_core.prompts import ChatPromptTemplate, PromptTemplate
from langchain_core.runnables import RunnableConfig
from pydantic import Field, TypeAdapter, ValidationError, model_validator

from langchain_answer_metrics.core.result import DetailsModel, MetricResult, TokenUsage
from langchain_answer_metrics.core.sample import SAMPLE_FIELDS, Sample, SampleField
from langchain_answer_metrics.judging.judges import Judge
from langchain_answer_metrics.judging.panel import ModelOutcome
from langchain_answer_metrics.judging.prompt_set import step_prompts
from langchain_answer_metrics.judging.step_specs import REGISTERED_STEPS
from langchain_answer_metrics.judging.steps.custom import (
    RUBRIC_VARIABLES,
    SAMPLE_VARIABLES,
    ask_votes,
    numbered_contexts,
)
from langchain_answer_metrics.judging.steps.intent import StepIntent
from langchain_answer_metrics.metrics.bands import band_named, checked_bands
from langchain_answer_metrics.metrics.base import JudgedMetric
from langchain_answer_metrics.metrics.judge_outputs import (
    OutputKind,
    OutputKinds,
    PassFail,
    Verdict,
    verdict_reason,
)
from langchain_answer_metrics.metrics.votes import warn_if_votes_will_agree

T = TypeVar("T")
_OUTPUT: TypeAdapter[OutputKind] = TypeAdapter(OutputKinds)


class ByInstance(Generic[T]):
    """A class attribute the base declares as a ClassVar, given per instance by ``read``;
    the class itself reads ``default`` (``CustomJudge.required_fields``)."""

    def __init__(self, default: T, read: Callable[[Any], T]) -> None:
        self.default, self.read = default, read

    @overload
    def __get__(self, obj: None, owner: type) -> T: ...
    @overload
    def __get__(self, obj: object, owner: type) -> T: ...
    def __get__(self, obj: object | None, owner: type) -> T:
        return self.default if obj is None else self.read(obj)


class CustomJudgeModelDetails(DetailsModel):
    """One judge's verdict (``label``, ``level`` or ``value`` by output kind), its score on
    the judge's scale (``judged``), every vote with its reason, and whether a tie decided."""

    absent_when_none = frozenset({"label", "level", "value"})
    label: str | None = None
    level: int | None = None
    value: float | None = None
    judged: float
    votes: list[str | int | float] = Field(default_factory=list)
    reasons: list[str] = Field(default_factory=list)
    tie: bool = False

    @property
    def verdict(self) -> str | int | float | None:
        """The verdict, whatever the kind: the label, the level or the value."""
        return next((v for v in (self.label, self.level, self.value) if v is not None), None)


class CustomJudgeDetails(DetailsModel):
    absent_when_none = frozenset({"criterion"})

    kind: Literal["custom_judge"] = "custom_judge"
    output: str
    criterion: str | None = None
    strictness: int = 1
    higher_is_better: bool = True
    models: dict[str, CustomJudgeModelDetails] = Field(default_factory=dict)


def _example(owner: str, used: set[str], example: Any) -> Any:
    """An example given in sample fields, as the step's variables the template uses."""
    if not isinstance(example, Mapping) or not isinstance(example.get("input"), Mapping):
        return example  # the step's own check names what is wrong
    values: dict[str, Any] = {}
    shown = used | {"user_input"} if "question" in used else used
    for name, value in example["input"].items():
        if name not in SAMPLE_FIELDS:
            raise ValueError(
                f"{owner}: an example's input names {name!r}, which is not a sample field "
                f"({', '.join(SAMPLE_FIELDS)})"
            )
        variable = "question" if name == "user_input" and "question" in used else name
        if variable not in used:
            raise ValueError(
                f"{owner}: an example's input gives {name!r}, which the prompt does not "
                f"show (it shows {', '.join(_fields_of(shown))})"
            )
        contexts = name == "retrieved_contexts" and not isinstance(value, str)
        values[variable] = numbered_contexts(value) if contexts else value
    return {**example, "input": values}


def _fields_of(used: set[str]) -> tuple[SampleField, ...]:
    """The sample fields a template shows (``question`` is the optional ``user_input``)."""
    return tuple(name for name in SAMPLE_FIELDS if name in used)


class CustomJudge(JudgedMetric):
    """A metric judged by the panel on your own criterion or prompt; the result key is ``name``.

    Attributes:
        llm: the judges: a chat model or :class:`Judge`, or a list of them (a panel).
        name: the result key (required), e.g. ``"conciseness"``.
        criterion: what to judge, in plain words (the default prompt shows the judge the
            criterion, the rubric, the question when the sample has one, and the response).
        prompt: your prompt instead of the default one: a ``ChatPromptTemplate`` or a
            string (the user message; the kind's instructions go in the system message,
            the rubric after your text) whose variables are sample fields:
            ``{user_input}``, ``{response}``, ``{reference}``, ``{retrieved_contexts}``.
            It may also name the kind's rubric (``{levels}``, ``{categories}``,
            ``{range}``), and must name ``{criterion}`` when a criterion is given too.
            The fields it names are the metric's required fields.
        output: :class:`PassFail` (default), :class:`Scale`, :class:`Categories` or
            :class:`Continuous`, or the same as a dict with its ``kind``.
        strictness: votes per judge (1 to 5): the majority for pass/fail and categories
            (a tie goes to the lower-scoring verdict), the median level for a scale (of
            an even number, the lower-scoring of the middle two), the median score for a
            continuous kind. Votes need a temperature above 0 to differ.
        examples: few-shot examples, ``[{"input": {sample fields}, "output": {"reason":
            ..., "verdict": ...}}]`` (a continuous kind's output has ``"score"``), checked
            against the output kind at construction.
        higher_is_better: ``False`` for a criterion where more is worse (harm, toxicity):
            the reported score is then 1 - the judged score, so 1.0 is always best and the
            threshold, band, pass rate, summaries and calibration read it as every other
            score; the judge's own verdict and judged score stay in the details
            (``judged``). A tie then goes to the verdict that judged worse.
        bands: the result's ``band`` names, each with the lowest score it holds (one at 0.0;
            :mod:`.bands`): ``{"concise": 0.8, "wordy": 0.0}``; default: excellent ... poor.

    Other options (``threshold``, ``aggregation``, ``prompts``...) are every judged metric's.

    Raises:
        ValueError: at construction: no name; neither a criterion nor a prompt; a
            template variable that is not a sample field; a bad output kind (a scale with
            a gap, a category without a score); an example that does not fit; bands
            without one starting at 0.0, or with an empty or repeated name.
        InvalidSampleError: from ``invoke``, before any request: a field the prompt
            shows is missing.

    Example:
        >>> concise = CustomJudge(
        ...     llm=ChatOpenAI(model="gpt-4o-mini", temperature=0.7), name="conciseness",
        ...     criterion="The response answers in as few words as possible.",
        ...     output=Scale(levels={1: "rambling", 2: "wordy", 3: "tight", 4: "one phrase"}),
        ...     strictness=3,
        ... )
        >>> concise.invoke({"response": "Paris."}).details.models["gpt-4o-mini"].level
        4
    """

    metric_key: ClassVar[str] = "custom_judge"
    required_fields = ByInstance[tuple[SampleField, ...]](
        ("response",), lambda metric: metric._shown_fields()
    )
    prompt_steps = ByInstance[tuple[str, ...]](
        (PassFail.step,), lambda metric: (metric.output.step,)
    )

    name: str = Field(min_length=1)
    criterion: str | None = None
    prompt: str | ChatPromptTemplate | None = Field(default=None, union_mode="left_to_right")
    output: OutputKinds = Field(default_factory=PassFail)
    strictness: int = Field(default=1, ge=1, le=5)
    higher_is_better: bool = True
    bands: dict[str, float] | None = None

    @model_validator(mode="before")
    @classmethod
    def _prompts_checked(cls, data: Any) -> Any:
        """The step's template (from the criterion or the user's prompt) and examples,
        checked against the output kind, before the fields are built."""
        if not isinstance(data, dict):
            return data
        data, owner = dict(data), f"{cls.__name__}({data.get('name')!r})"
        if not data.get("name"):
            raise ValueError(f"{cls.__name__}: name is required (the result key)")
        if data.get("bands") is not None:
            data["bands"] = checked_bands(owner, data["bands"])
        try:
            output = _OUTPUT.validate_python(data.get("output", PassFail()))
        except ValidationError:
            return {**data, "prompts": {}, "examples": {}}  # the field reports it
        step = output.step
        criterion, prompt = data.get("criterion"), data.get("prompt")
        if criterion is None and prompt is None:
            raise ValueError(f"{owner}: give a criterion, or a prompt")
        if criterion is not None and (not isinstance(criterion, str) or not criterion.strip()):
            raise ValueError(f"{owner}: criterion is empty or whitespace-only")
        custom = data.get("prompts")
        if prompt is not None:
            if custom:
                raise ValueError(f"{owner}: give prompt= or prompts=, not both")
            custom = {step: _template(owner, step, prompt, criterion is not None)}
        checked = step_prompts(owner, (step,), custom, None)[step]
        used = set(checked.template.input_variables) | set(checked.template.optional_variables)
        given = data.get("examples")
        if isinstance(given, Mapping):
            given = {
                name: [_example(owner, used, e) for e in items] for name, items in given.items()
            }
        elif given is not None:
            given = [_example(owner, used, example) for example in given]
        checked = step_prompts(owner, (step,), custom, given)[step]
        schema = output.reply_schema()
        examples = []
        for example in checked.examples:
            try:
                narrowed = schema.model_validate(example.output.model_dump())
            except ValidationError as error:
                raise ValueError(
                    f"{owner}: an example's output does not fit {type(output).__name__}: {error}"
                ) from None
            examples.append(type(example)(input=example.input, output=narrowed))
        data["prompts"] = {step: checked.template}
        data["examples"] = {step: examples} if examples else {}
        return data

    def model_post_init(self, context: Any) -> None:
        super().model_post_init(context)
        warn_if_votes_will_agree(f"{type(self).__name__} {self.key!r}", self.llm, self.strictness)

    def _result(self, **parts: Any) -> MetricResult:
        result = super()._result(**parts)
        if self.bands is None or result.score is None:
            return result
        return result.model_copy(update={"band": band_named(self.bands, result.score)})

    def _shown_fields(self) -> tuple[SampleField, ...]:
        template = self.prompts[self.output.step]
        used = set(template.input_variables) | set(template.optional_variables)
        return _fields_of(used) or ("response",)

    def _details(self, models: dict[str, dict[str, Any]]) -> CustomJudgeDetails:
        return CustomJudgeDetails(
            output=self.output.kind,
            criterion=self.criterion,
            strictness=self.strictness,
            higher_is_better=self.higher_is_better,
            models=models,
        )

    async def _score_with(
        self, judge: Judge, sample: Sample, config: RunnableConfig
    ) -> ModelOutcome:
        output, step = self.output, self.output.step
        values = {
            "criterion": self.criterion,
            RUBRIC_VARIABLES.get(step, "rubric"): output.rubric(),
            "question": sample.user_input,
            "user_input": sample.user_input,
            "response": sample.response,
            "reference": sample.reference,
            "retrieved_contexts": numbered_contexts(sample.retrieved_contexts),
        }
        replies = await ask_votes(
            judge,
            step=step,
            schema=output.reply_schema(),
            prompt=self._step_prompts()[step],
            values=values,
            votes=self.strictness,
            config=config,
            intent=StepIntent(
                step=step,
                criterion=self.criterion,
                response=sample.response,
                items=tuple(str(choice) for choice in output.choices()),
            ),
            trace_input={name: value for name, value in values.items() if value is not None},
        )
        votes = [output.verdict_of(reply.parsed) for reply in replies]
        verdict, tie = output.decide(votes, self.higher_is_better)
        judged = output.judged_score(verdict)
        usage = TokenUsage()
        for reply in replies:
            usage = usage.add(reply.usage)
        reasons = [str(getattr(reply.parsed, "reason", "")) for reply in replies]
        return ModelOutcome(
            score=judged if self.higher_is_better else 1.0 - judged,
            details=dict(_model_details(output, verdict, judged, votes, reasons, tie)),
            reason=verdict_reason(verdict, votes, reasons, tie),
            usage=usage,
        )


def _model_details(
    output: OutputKind,
    verdict: Verdict,
    judged: float,
    votes: Sequence[Verdict],
    reasons: list[str],
    tie: bool,
) -> CustomJudgeModelDetails:
    place = {"scale": "level", "continuous": "value"}.get(str(output.kind), "label")
    return CustomJudgeModelDetails(
        **{place: verdict}, judged=judged, votes=list(votes), reasons=reasons, tie=tie
    )


def _template(owner: str, step: str, prompt: Any, has_criterion: bool) -> ChatPromptTemplate:
    """The user's prompt as the step's template: a string is the user message, after the
    kind's instructions and before its rubric (unless it shows the rubric itself). Its
    variables must be sample fields (or the criterion and the rubric)."""
    rubric = RUBRIC_VARIABLES.get(step)
    if isinstance(prompt, str):
        if not prompt.strip():
            raise ValueError(f"{owner}: the prompt is empty")
        system = SystemMessage(REGISTERED_STEPS[step].system)
        shows_rubric = rubric in PromptTemplate.from_template(prompt).input_variables
        after = f"\n\n{{{rubric}}}" if rubric and not shows_rubric else ""
        prompt = ChatPromptTemplate.from_messages([system, ("human", prompt + after)])
    if not isinstance(prompt, ChatPromptTemplate):
        raise ValueError(
            f"{owner}: the prompt must be a ChatPromptTemplate or a string, "
            f"got {type(prompt).__name__}"
        )
    allowed = (*SAMPLE_VARIABLES, "criterion", *((rubric,) if rubric else ()))
    used = set(prompt.input_variables) | set(prompt.optional_variables)
    for name in sorted(used):
        if name not in allowed:
            raise ValueError(
                f"{owner}: the prompt names {{{name}}}, which is not a sample field; "
                f"it may name {', '.join('{' + a + '}' for a in allowed)}"
            )
    if "criterion" in used and not has_criterion:
        raise ValueError(f"{owner}: the prompt names {{criterion}} but no criterion is given")
    if has_criterion and "criterion" not in used:
        raise ValueError(
            f"{owner}: a criterion is given but the prompt does not name {{criterion}}"
        )
    if not used & set(SAMPLE_VARIABLES):
        raise ValueError(
            f"{owner}: the prompt names no sample field; it must show the judge at least one "
            f"of {', '.join('{' + f + '}' for f in SAMPLE_VARIABLES)}"
        )
    return prompt


__all__ = ["CustomJudge", "CustomJudgeDetails", "CustomJudgeModelDetails"]
