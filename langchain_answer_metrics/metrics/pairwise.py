"""PairwisePreference: which of two responses to the same input is better, judged in both orders.

Each judge is asked twice, concurrently: once with ``response_a`` shown first, once with
``response_b`` shown first. The same preference both times wins: 1.0 when A is better,
0.0 when B is, 0.5 for a tie the judge gave both times. Verdicts that differ between the
two orders are a tie (0.5) flagged ``position_bias`` in the details, with both verdicts:
the judge went by where an answer was shown, not by what it said. The panel then
aggregates the judges' scores (mean by default). ``requests`` counts both orders.

    >>> pairwise = PairwisePreference(llm=judge)
    >>> pairwise.invoke({"user_input": "Capital of France?", "response_a": "Paris.",
    ...                  "response_b": "Lyon."}).score
    1.0
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from langchain_core.runnables import RunnableConfig
from pydantic import Field, field_validator

from langchain_answer_metrics.core.result import DetailsModel
from langchain_answer_metrics.core.sample import (
    InvalidSampleError,
    RowFields,
    Sample,
    SampleField,
    to_sample,
)
from langchain_answer_metrics.core.strict_options import check_options
from langchain_answer_metrics.judging.judges import Judge
from langchain_answer_metrics.judging.panel import ModelOutcome
from langchain_answer_metrics.judging.steps.pairwise import (
    DEFAULT_CRITERION,
    STEP,
    Position,
    judge_pair,
)
from langchain_answer_metrics.judging.sync import gather_settled
from langchain_answer_metrics.metrics.base import MAPPING_OPTIONS, JudgedMetric

if TYPE_CHECKING:  # named through the public face: the metrics import nothing above them
    from langchain_answer_metrics import ComparativeEvaluator

Preferred = Literal["A", "B", "tie"]
PAIR_FIELDS = ("user_input", "response_a", "response_b", "reference")
SCORES: dict[str, float] = {"A": 1.0, "B": 0.0, "tie": 0.5}


class PairSample(Sample):
    """Two responses to one input: what :class:`PairwisePreference` scores.

    A :class:`Sample` (so the runner takes it as one) whose ``response`` is unused.

    Attributes:
        user_input: the question both responses answer (optional).
        response_a: the first response compared.
        response_b: the second response compared.
        reference: the expected answer (optional).

    Example:
        >>> PairSample(user_input="2+2?", response_a="4", response_b="5")
        PairSample(user_input='2+2?', response_a='4', response_b='5', reference=None)
    """

    response_a: str
    response_b: str

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r:.80}" for name in PAIR_FIELDS)
        return f"PairSample({fields})"


class PairwiseOrder(DetailsModel):
    """One request: which response was shown first, the position the judge picked, what
    that means for A and B, and the judge's reason."""

    shown_first: Literal["A", "B"]
    picked: Position
    preferred: Preferred
    reason: str = ""


class PairwiseModelDetails(DetailsModel):
    """One judge's verdicts in both orders and its preference; ``position_bias`` when the
    two orders disagreed (the preference is then a tie)."""

    preferred: Preferred
    position_bias: bool = False
    orders: list[PairwiseOrder] = Field(default_factory=list)


class PairwisePreferenceDetails(DetailsModel):
    absent_when_none = frozenset({"criterion"})

    kind: Literal["pairwise_preference"] = "pairwise_preference"
    criterion: str | None = None
    models: dict[str, PairwiseModelDetails] = Field(default_factory=dict)

    @property
    def position_bias(self) -> dict[str, bool]:
        """Per judge, whether its two orders disagreed."""
        return {label: model.position_bias for label, model in self.models.items()}


def _preferred(picked: Position, shown_first: Literal["A", "B"]) -> Preferred:
    """The response a positional verdict names: A is the answer shown first."""
    if picked == "tie":
        return "tie"
    other: Preferred = "B" if shown_first == "A" else "A"
    return shown_first if picked == "A" else other


def _renamed(error: InvalidSampleError, field: str) -> InvalidSampleError:
    return InvalidSampleError(error.metric, field, error.problem)


class PairwisePreference(JudgedMetric):
    """Which of two responses is better, each judge asked in both orders.

    Attributes:
        llm: the judges: a chat model or :class:`Judge`, or a list of them (a panel).
        criterion: what the responses are compared on; default: which better answers the
            question (correct, complete, relevant; agreeing with a reference if given).
        name: the result key (default ``"pairwise_preference"``).
        prompts: ``{"judge_pairwise": template or instructions}`` replacing the prompt.
        examples: ``{"judge_pairwise": [{"input": {...}, "output": {...}}]}``.

    Other options (``threshold``, ``aggregation`` ...) are every metric's (:class:`AnswerMetric`).

    Raises:
        InvalidSampleError: from ``invoke``, before any request: ``response_a`` or
            ``response_b`` missing or empty, or a field that is not a pair's.

    Example:
        >>> pairwise = PairwisePreference(llm=[judge_a, judge_b], criterion="Be concise.")
        >>> result = pairwise.invoke({"user_input": "2+2?", "response_a": "4.",
        ...                           "response_b": "Four, since two plus two is four."})
        >>> result.score, result.details["models"]["judge-a"].position_bias
        (1.0, False)
    """

    metric_key: ClassVar[str] = "pairwise_preference"
    # A pair's own fields (response_a, response_b) are checked by check_sample.
    required_fields: ClassVar[tuple[SampleField, ...]] = ()
    prompt_steps: ClassVar[tuple[str, ...]] = (STEP,)

    criterion: str | None = None

    @field_validator("criterion")
    @classmethod
    def _criterion_has_text(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("PairwisePreference: criterion is empty or whitespace-only")
        return value

    def check_sample(self, value: Any) -> PairSample:
        """A :class:`PairSample` from ``value`` (one, or a dict of its fields), refusing
        a missing or empty response and any other field, before any request. A dataset
        row the runner mapped (:class:`RowFields`) gives its pair's fields; the others
        (``response``, ``retrieved_contexts``) are the other metrics'."""
        if isinstance(value, PairSample | RowFields):
            value = {
                name: value.get(name) if isinstance(value, RowFields) else getattr(value, name)
                for name in PAIR_FIELDS
            }
        if not isinstance(value, Mapping):
            raise InvalidSampleError(
                self.key, "sample", f"must be a PairSample or a dict, got {type(value).__name__}"
            )
        unknown = sorted(str(key) for key in value if key not in PAIR_FIELDS)
        if unknown:
            raise InvalidSampleError(
                self.key,
                unknown[0],
                f"is not a field of a pair (expected {', '.join(PAIR_FIELDS)})",
            )
        limits = {"max_chars": self.max_input_chars, "max_contexts": self.max_contexts}
        context = to_sample(
            self.key,
            {"user_input": value.get("user_input"), "reference": value.get("reference")},
            required=(),
            **limits,
        )
        responses: dict[str, str] = {}
        for field in ("response_a", "response_b"):
            try:
                checked = to_sample(
                    self.key, {"response": value.get(field)}, required=("response",), **limits
                )
            except InvalidSampleError as error:
                raise _renamed(error, field) from None
            assert checked.response is not None
            responses[field] = checked.response
        return PairSample(user_input=context.user_input, reference=context.reference, **responses)

    def as_comparative_evaluator(self, **mapping: Any) -> ComparativeEvaluator:
        """This metric as a LangSmith comparative evaluator, for
        ``langsmith.evaluate((experiment_a, experiment_b), evaluators=[...])``: one score
        per experiment's run (1.0 preferred, 0.0 not, 0.5 each for a tie).

        ``mapping`` says where the question, response and reference are, as for
        :meth:`as_evaluator` (``response="answer"``, or a callable).
        """
        check_options(f"{type(self).__name__}.as_comparative_evaluator", mapping, MAPPING_OPTIONS)
        # langchain_answer_metrics.comparative_evaluator(self), through the public face at
        # call time (see AnswerMetric.as_evaluator).
        import langchain_answer_metrics

        return langchain_answer_metrics.comparative_evaluator(self, **mapping)

    def _details(self, models: dict[str, dict[str, Any]]) -> PairwisePreferenceDetails:
        return PairwisePreferenceDetails(
            criterion=self.criterion,
            models={label: PairwiseModelDetails.model_validate(m) for label, m in models.items()},
        )

    async def _score_with(
        self, judge: Judge, sample: Sample, config: RunnableConfig
    ) -> ModelOutcome:
        assert isinstance(sample, PairSample)  # check_sample made it
        prompt = self._step_prompts()[STEP]
        criterion = self.criterion or DEFAULT_CRITERION

        def ask(shown_first: Literal["A", "B"]) -> Any:
            first, second = (
                (sample.response_a, sample.response_b)
                if shown_first == "A"
                else (sample.response_b, sample.response_a)
            )
            return judge_pair(
                judge,
                first=first,
                second=second,
                criterion=criterion,
                question=sample.user_input,
                reference=sample.reference,
                prompt=prompt,
                side=f"{shown_first.lower()}_first",
                config=config,
            )

        # Both orders in flight at once: neither waits for the other's reply.
        a_first, b_first = await gather_settled(ask("A"), ask("B"))
        shown: tuple[Literal["A", "B"], ...] = ("A", "B")
        orders = [
            PairwiseOrder(
                shown_first=first,
                picked=verdict.picked,
                preferred=_preferred(verdict.picked, first),
                reason=verdict.reason,
            )
            for first, verdict in zip(shown, (a_first, b_first))
        ]
        biased = orders[0].preferred != orders[1].preferred
        preferred: Preferred = "tie" if biased else orders[0].preferred
        if biased:
            verdicts = ", ".join(
                f"{order.preferred} with {order.shown_first} shown first" for order in orders
            )
            reason = f"tie (position bias: {verdicts}): {orders[0].reason}"
        else:
            better = "tie" if preferred == "tie" else f"{preferred} is better"
            reason = f"{better} in both orders: {orders[0].reason}"
        return ModelOutcome(
            score=SCORES[preferred],
            details=dict(
                PairwiseModelDetails(preferred=preferred, position_bias=biased, orders=orders)
            ),
            reason=reason,
            usage=a_first.usage.add(b_first.usage),
        )
