"""What a run spent: tokens, requests and cost per model and per metric, from results.

    >>> pricing = Pricing.of(metrics, prices={"judge-a": Price(input_per_million=0.15,
    ...                                                         output_per_million=0.6)})
    >>> spend = tally((row.results for row in rows), pricing)
    >>> spend.total.cost, spend.models["judge-a"].input_tokens

A result's ``usage`` says what each model spent on that sample (a reply served from
LangChain's cache is counted in ``cached``, at no cost). A model's price comes from the
user's ``prices`` (by label or model id), then the built-in table
(:mod:`langchain_answer_metrics.core.prices`) by model id. The table's list prices are a
provider's own: a model served on this machine (a loopback address: the toy judge, a local
model, a local proxy) takes none of them, whatever its name. Costs are None where a model
that made requests has no price: never a silent 0.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from langchain_core.runnables import Runnable
from pydantic import BaseModel, Field

from langchain_answer_metrics.core.prices import Price, PriceTable, price_for
from langchain_answer_metrics.core.result import TokenUsage
from langchain_answer_metrics.judging.endpoints import endpoint_of
from langchain_answer_metrics.judging.judges import Embedder, Judge, model_label, wrapped_model
from langchain_answer_metrics.judging.model_facts import optional_attribute
from langchain_answer_metrics.metrics.base import AnswerMetric

__all__ = ["ModelSpend", "Pricing", "Spend", "local_labels", "tally"]


class ModelSpend(BaseModel):
    """Requests, tokens and cost of one model (or of a whole run, summed)."""

    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached: int = Field(default=0, description="Replies (or texts) served from cache: free.")
    cached_input_tokens: int = Field(
        default=0, description="Input tokens read from the provider's prompt cache."
    )
    cost: float | None = Field(default=None, description="USD; None without a price.")

    def add(self, usage: TokenUsage, cost: float | None) -> None:
        self.requests += usage.requests
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.cached += usage.cached
        self.cached_input_tokens += usage.cached_input_tokens
        if cost is not None:
            self.cost = (self.cost or 0.0) + cost

    @property
    def spent(self) -> bool:
        return bool(self.requests or self.input_tokens or self.output_tokens)

    def usage(self) -> TokenUsage:
        return TokenUsage(
            requests=self.requests,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            cached=self.cached,
            cached_input_tokens=self.cached_input_tokens,
        )

    def describe(self, cost: str | None = None) -> str:
        """``412 requests, 1.2M input + 40k output tokens, 3 cached (free), $0.4200``
        (``cost`` in place of the amount, e.g. why there is none)."""
        text = (
            f"{self.requests:,} request{'s' if self.requests != 1 else ''}, "
            f"{_tokens(self.input_tokens)} input + {_tokens(self.output_tokens)} output tokens"
        )
        if self.cached_input_tokens:
            text += f" ({_tokens(self.cached_input_tokens)} input from the provider's cache)"
        if self.cached:
            text += f", {self.cached:,} cached (free)"
        return f"{text}, {cost or usd(self.cost)}"


def _tokens(count: int) -> str:
    if count >= 1_000_000:
        return f"{count / 1_000_000:.1f}M"
    if count >= 10_000:
        return f"{count / 1000:.0f}k"
    return f"{count:,}"


def usd(cost: float | None) -> str:
    """``$0.4200``, ``$0.000421`` (small amounts keep their digits), or ``no price``."""
    if cost is None:
        return "no price"
    return f"${cost:.4f}" if cost == 0 or cost >= 0.01 else f"${cost:.6f}"


def total_of(per_model: Mapping[str, ModelSpend]) -> ModelSpend:
    """The sum over models; its cost None if one that spent has no price, else 0.0 or
    more (nothing spent costs nothing)."""
    total = ModelSpend()
    for spent in per_model.values():
        total.add(spent.usage(), spent.cost)
    unpriced = any(spent.cost is None and spent.spent for spent in per_model.values())
    total.cost = None if unpriced else (total.cost or 0.0)
    return total


class Spend(BaseModel):
    """A run's spend per model label, per metric key and model label, and in total.

    ``total.cost`` is None unless every model that spent something has a price.
    """

    models: dict[str, ModelSpend] = Field(default_factory=dict)
    metrics: dict[str, dict[str, ModelSpend]] = Field(default_factory=dict)
    total: ModelSpend = Field(default_factory=ModelSpend)
    unpriced: list[str] = Field(
        default_factory=list, description="Models that spent something but have no price."
    )

    def describe(self) -> str:
        """One line for the whole run: requests, tokens, cache hits, cost (or which
        models have no price)."""
        unpriced = f"no price for {', '.join(self.unpriced)}" if self.unpriced else None
        return self.total.describe(unpriced)


class Pricing:
    """The price of each model label in a run.

    Build it with :meth:`of` from the run's metrics (their labels and model ids), or
    directly from ``{label: model_id}``.
    """

    def __init__(
        self,
        model_ids: Mapping[str, str] | None = None,
        *,
        prices: PriceTable | None = None,
        builtin: bool = True,
        discounted: Iterable[str] = (),
        local: Iterable[str] = (),
    ) -> None:
        self.model_ids = dict(model_ids or {})
        self.prices = dict(prices or {})
        self.builtin = builtin
        # Labels served on this machine: no list price of the built-in table is theirs.
        self.local = frozenset(local)
        # Labels sent through the Batch API or the flex tier: priced at Price.discounted().
        self.discounted = frozenset(discounted)
        self._known: dict[str, Price | None] = {}

    @classmethod
    def of(
        cls,
        metrics: Sequence[AnswerMetric],
        *,
        prices: PriceTable | None = None,
        builtin: bool = True,
        batch: Iterable[str] = (),
    ) -> Pricing:
        """The prices of ``metrics``' models; the labels in ``batch`` (and the models on
        OpenAI's ``flex`` service tier) at their batch price; those served on this machine
        (:func:`local_labels`) only at ``prices``."""
        return cls(
            model_ids(metrics),
            prices=prices,
            builtin=builtin,
            discounted={*batch, *flex_labels(metrics)},
            local=local_labels(metrics),
        )

    def pay_live(self, labels: Iterable[str]) -> None:
        """``labels`` are paid at the live price from now on (their batches refused)."""
        self.discounted = self.discounted - set(labels)
        self._known.clear()

    def price(self, label: str) -> Price | None:
        """The price of ``label``: a model's label, or AnswerCorrectness's
        ``component/label``."""
        if label not in self._known:
            self._known[label] = self._lookup(label)
        return self._known[label]

    def model_of(self, label: str) -> str:
        """The model label a usage label is for: AnswerCorrectness reports its
        components' usage as ``factual_correctness/judge-a``, which is judge-a's."""
        _, slash, inner = label.partition("/")
        if slash and label not in self.model_ids and inner in self.model_ids:
            return inner
        return label

    def _lookup(self, label: str) -> Price | None:
        names = dict.fromkeys([self.model_of(label), label])
        builtin = self.builtin and self.model_of(label) not in self.local
        for name in names:
            found = price_for(name, self.model_ids.get(name), prices=self.prices, builtin=builtin)
            if found is not None:
                return found.discounted() if self.model_of(label) in self.discounted else found
        return None

    def cost(self, label: str, usage: TokenUsage) -> float | None:
        """USD for ``usage`` by ``label``; 0.0 when nothing was spent, None without a price."""
        if not (usage.requests or usage.input_tokens or usage.output_tokens):
            return 0.0
        price = self.price(label)
        if price is None:
            return None
        return price.cost(
            usage.input_tokens, usage.output_tokens, cached_input_tokens=usage.cached_input_tokens
        )

    def unpriced(self) -> list[str]:
        """The run's model labels with no price."""
        return [label for label in self.model_ids if self.price(label) is None]

    def spent_on(self, outcomes: Mapping[str, Any]) -> tuple[float, int]:
        """USD (what unpriced models spent counts 0) and requests of one sample's
        outcomes (``{metric key: result or error}``), from their ``usage``."""
        cost, requests = 0.0, 0
        for outcome in outcomes.values():
            for label, spent in (getattr(outcome, "usage", None) or {}).items():
                cost += self.cost(label, spent) or 0.0
                requests += spent.requests
        return cost, requests


def flex_labels(metrics: Iterable[AnswerMetric]) -> list[str]:
    """Labels of the judges whose model asks for OpenAI's ``flex`` service tier."""
    return [
        label
        for label, model in _members(metrics).items()
        if optional_attribute(wrapped_model(model), "service_tier") == "flex"
    ]


def local_labels(metrics: Iterable[AnswerMetric]) -> list[str]:
    """Labels of the judges and embedders of ``metrics`` served on this machine (a
    loopback address: the toy judge, a local model, a local proxy). The built-in table's
    list prices are a provider's own, so none is theirs: give them ``prices=``.

    Example:
        >>> local_labels([Faithfulness(llm=ChatOpenAI(base_url="http://127.0.0.1:8011/v1"))])
        ['gpt-4o-mini']
    """
    return [label for label, model in _members(metrics).items() if _on_this_machine(model)]


def _on_this_machine(model: Any) -> bool:
    endpoint = endpoint_of(wrapped_model(model))
    host = urlsplit(endpoint).hostname if endpoint is not None else None
    if not host:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def batch_labels(metrics: Iterable[AnswerMetric], *, embeddings: bool = True) -> list[str]:
    """Labels of the judges and embedders batch mode sends through the Batch API (OpenAI
    chat models; OpenAI embeddings models unless ``embeddings=False``)."""
    from langchain_answer_metrics.judging.batch.standin import (
        is_openai_chat_model,
        is_openai_embeddings,
    )

    return [
        label
        for label, model in _members(metrics).items()
        if (isinstance(model, Runnable) and is_openai_chat_model(wrapped_model(model)))
        or (embeddings and is_openai_embeddings(model))
    ]


def _members(metrics: Iterable[AnswerMetric]) -> dict[str, Any]:
    found: dict[str, Any] = {}

    def visit(value: Any) -> None:
        if isinstance(value, AnswerMetric):
            for name in type(value).model_fields:
                visit(getattr(value, name, None))
        elif isinstance(value, (list, tuple)):
            for item in value:
                visit(item)
        elif isinstance(value, (Judge, Embedder)):
            found.setdefault(value.label, value.model)

    for metric in metrics:
        visit(metric)
    return found


def model_ids(metrics: Iterable[AnswerMetric]) -> dict[str, str]:
    """``{label: model id}`` of every judge and embedder of ``metrics`` (and of the
    metrics they hold, e.g. AnswerCorrectness's components)."""
    return {label: model_label(model) for label, model in _members(metrics).items()}


def tally(rows: Iterable[Mapping[str, Any]], pricing: Pricing) -> Spend:
    """Sum the ``usage`` of each row's results (``{metric key: result or error}``).

    An outcome without ``usage`` (an error) adds nothing.
    """
    spend = Spend()
    unpriced: set[str] = set()
    for outcomes in rows:
        for key, outcome in outcomes.items():
            usage: Mapping[str, TokenUsage] = getattr(outcome, "usage", None) or {}
            for usage_label, spent in usage.items():
                label = pricing.model_of(usage_label)
                cost = pricing.cost(label, spent)
                if cost is None:
                    unpriced.add(label)
                per_metric = spend.metrics.setdefault(key, {}).setdefault(label, ModelSpend())
                per_metric.add(spent, cost)
                spend.models.setdefault(label, ModelSpend()).add(spent, cost)
    # A model with no price has no cost, even where some of its usage cost nothing (a
    # shared call, a cache hit): never a silent 0.
    for label in unpriced:
        spend.models[label].cost = None
    for per_model in spend.metrics.values():
        for label, spent_there in per_model.items():
            if label in unpriced and spent_there.spent:
                spent_there.cost = None
    spend.total = total_of(spend.models)
    spend.unpriced = sorted(unpriced)
    return spend
