"""What a run spent, laid out: lines for the terminal, a table for the HTML report, and the
``--summary-json`` objects. The numbers come from :func:`langchain_answer_metrics.run.spend.tally`
(tokens and requests per model and per metric; replies served from cache counted apart,
at no cost; a cost only where every model that spent has a price).
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langchain_answer_metrics.cli.output.printing import for_terminal
from langchain_answer_metrics.core.result import TokenUsage
from langchain_answer_metrics.run.spend import ModelSpend, Pricing, Spend, tally, total_of, usd

__all__ = ["spend_html", "spend_json", "spend_lines", "spend_of", "usage_by_label"]


def spend_of(rows: Iterable[Mapping[str, Any]], pricing: Pricing | None) -> Spend:
    """The spend of ``rows`` (``{metric key: outcome with .usage}``: results, errors or
    ``--out`` records)."""
    return tally(rows, pricing or Pricing())


def usage_by_label(rows: Iterable[Mapping[str, Any]]) -> dict[str, TokenUsage]:
    """Each usage label's total (AnswerCorrectness's ``component/model`` kept apart)."""
    usage: dict[str, TokenUsage] = {}
    for outcomes in rows:
        for outcome in outcomes.values():
            for label, spent in (getattr(outcome, "usage", None) or {}).items():
                usage[label] = usage[label].add(spent) if label in usage else spent
    return dict(sorted(usage.items()))


def spend_lines(spend: Spend, title: str = "spend") -> list[str]:
    """``spend: 412 requests, 1.2M input + 40k output tokens, 3 cached (free), $0.4200``,
    then a line per model and per metric."""
    lines = [f"{title}: {spend.describe()}"]
    lines += [f"  {label}: {spent.describe()}" for label, spent in spend.models.items()]
    lines += [
        f"  {key}: {total_of(per_model).describe()}" for key, per_model in spend.metrics.items()
    ]
    return [for_terminal(line) for line in lines]


def spend_json(spend: Spend) -> dict[str, Any]:
    """``models`` (per label), ``metrics`` (per key: per label, and ``total``), ``total``
    and ``unpriced``; costs in USD, null without a price."""
    return {
        "models": {label: spent.model_dump() for label, spent in spend.models.items()},
        "metrics": {
            key: {
                **{label: spent.model_dump() for label, spent in per_model.items()},
                "total": total_of(per_model).model_dump(),
            }
            for key, per_model in spend.metrics.items()
        },
        "total": spend.total.model_dump(),
        "unpriced": list(spend.unpriced),
    }


def _row(name: str, spent: ModelSpend, css: str = "") -> str:
    cells = [
        f"{spent.requests:,}",
        f"{spent.cached:,}",
        f"{spent.input_tokens:,}",
        f"{spent.output_tokens:,}",
        usd(spent.cost),
    ]
    numbers = "".join(f'<td class="num">{html.escape(cell)}</td>' for cell in cells)
    return f"<tr{css}><td>{html.escape(name)}</td>{numbers}</tr>"


def spend_html(spend: Spend, keys: Sequence[str] = ()) -> str:
    """A table: a row per model, per metric and model, and the total; cache hits in a
    column of their own."""
    titles = ("requests", "cached (free)", "input tokens", "output tokens", "cost (USD)")
    head = "<th></th>" + "".join(f'<th class="num">{html.escape(t)}</th>' for t in titles)
    rows = ['<tr><th colspan="6">by model</th></tr>']
    rows += [_row(label, spent, ' class="spend-model"') for label, spent in spend.models.items()]
    rows.append('<tr><th colspan="6">by metric</th></tr>')
    ordered = [key for key in keys if key in spend.metrics] + [
        key for key in spend.metrics if key not in keys
    ]
    for key in ordered:
        for label, spent in spend.metrics[key].items():
            rows.append(_row(f"{key} · {label}", spent, ' class="spend-metric"'))
    rows.append(_row("total", spend.total, ' class="spend-total"'))
    note = ""
    if spend.unpriced:
        note = (
            f'<p class="stat">no price for {html.escape(", ".join(spend.unpriced))}: add '
            "<code>price:</code> to the model in the models file</p>"
        )
    return (
        f'<table class="spend"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>{note}"
    )
