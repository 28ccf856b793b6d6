"""``answer-metrics evaluate DATA --estimate [--json PATH]``: what the run would send, and
cost, without sending anything.

The same metrics, models and prices as the run (:func:`~.plans.build_metrics` and the
config file's ``price:`` entries, then the built-in table), and the same resume: rows
already scored in ``--out`` are not estimated, since the run would not score them again.
Each group of rows the run would stream (usually one) is estimated by
:func:`langchain_answer_metrics.costs.estimate`, a dry run that sends no request; the
groups are then added up. ``--json PATH`` writes :meth:`CostEstimate.as_dict`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import TextIO

from langchain_answer_metrics.cli.datasets import DatasetRow
from langchain_answer_metrics.cli.options import UsageError
from langchain_answer_metrics.cli.output.printing import for_terminal
from langchain_answer_metrics.cli.plans import MetricPlans
from langchain_answer_metrics.costs import CostEstimate, EstimateTotal, combine, estimate
from langchain_answer_metrics.metrics.explain import counted
from langchain_answer_metrics.run.spend import batch_labels

__all__ = ["print_estimate", "run_estimate"]


def run_estimate(
    groups: Mapping[tuple[str, ...], Iterable[DatasetRow]],
    plans: MetricPlans,
    *,
    path: Path | None,
    max_concurrency: int,
    batch_embeddings: bool = True,
) -> int:
    """Estimate the rows still to score in ``groups``, print it (and write it to ``path``,
    ``--json``); exit code 0. Sends no request. Each group's rows are read as the dry run
    streams them, as the run reads them: memory stays flat however long the file.
    ``batch_embeddings``: the "with --batch" column prices the embedders batched too."""
    if path is not None and not path.expanduser().resolve().parent.is_dir():
        raise UsageError(f"--json {path}: the folder {path.parent} does not exist; create it")
    prices = dict(getattr(plans.panel, "prices", None) or {})
    parts = [
        estimate(
            (row.input for row in rows),  # what the run scores, read lazily
            [plan.metric for plan in plans if plan.metric.key in missing],
            prices=prices or None,
            max_concurrency=max_concurrency,
        )
        for missing, rows in groups.items()
    ]
    plan = combine(parts)
    batched = batch_labels([p.metric for p in plans], embeddings=batch_embeddings)
    print_estimate(plan, batched=batched)
    if path is not None:
        try:
            path.write_text(json.dumps(plan.as_dict(), indent=2) + "\n", encoding="utf-8")
        except OSError as error:
            raise UsageError(f"--json {path}: cannot write it ({error.strerror})") from None
        print(f"estimate: {path}", file=sys.stderr)
    return 0


def _tokens(low: int, high: int) -> str:
    return f"{low:,}" if low == high else f"{low:,}-{high:,}"


def _cost(total: EstimateTotal) -> str:
    if total.cost_low is None or total.cost_high is None:
        return "no price"
    return f"${total.cost_low:.4f}-${total.cost_high:.4f}"


def _batch_costs(plan: CostEstimate, batched: Collection[str]) -> dict[str, EstimateTotal]:
    """Per label and in total, the cost with ``--batch``: the batched judges at their
    batch price (:meth:`Price.discounted`), the other models as live."""
    costs: dict[str, EstimateTotal] = {}
    for label, model in plan.models.items():
        price = model.price
        if price is None or label not in batched:
            costs[label] = model
            continue
        price = price.discounted()
        costs[label] = EstimateTotal(
            cost_low=price.cost(
                model.prompt_tokens,
                model.completion_tokens_low,
                cached_input_tokens=model.cached_input_tokens,
            ),
            cost_high=price.cost(model.prompt_tokens, model.completion_tokens_high),
        )
    priced = [cost for cost in costs.values() if cost.cost_low is not None]
    complete = plan.total.cost_low is not None
    costs["total"] = EstimateTotal(
        cost_low=sum(c.cost_low or 0.0 for c in priced) if complete else None,
        cost_high=sum(c.cost_high or 0.0 for c in priced) if complete else None,
    )
    return costs


ESTIMATE_COLUMNS = (
    "model",
    "requests",
    "cached",
    "prompt tokens",
    "cache-read",
    "completion tokens",
    "cost (USD)",
    "with --batch",
)


def _row(name: str, total: EstimateTotal, batch: EstimateTotal) -> tuple[str, ...]:
    """One line of the table: a model's (or the total's) counts, cost live and batched."""
    return (
        name,
        f"{total.requests:,}",
        f"{total.cached:,}",
        f"{total.prompt_tokens:,}",
        f"{total.cached_input_tokens:,}",
        _tokens(total.completion_tokens_low, total.completion_tokens_high),
        _cost(total),
        _cost(batch),
    )


def print_estimate(
    plan: CostEstimate, stream: TextIO | None = None, *, batched: Collection[str] = ()
) -> None:
    """Per model label: requests, cached, prompt tokens (and, of them, those a provider's
    prompt cache is expected to serve), completion tokens (low-high), cost live and with
    ``--batch`` (``batched``: the judges it sends through the Batch API; low-high, or
    "no price"); then the total. ``stream``: standard output when called."""
    stream = stream or sys.stdout
    print(
        f"estimate for {plan.samples} sample{'s' if plan.samples != 1 else ''} (no request sent):",
        file=stream,
    )
    batch = _batch_costs(plan, batched)
    table: list[tuple[str, ...]] = [ESTIMATE_COLUMNS]
    for label, model in plan.models.items():
        table.append(_row(for_terminal(label), model, batch[label]))
    table.append(_row("total", plan.total, batch["total"]))
    widths = [max(len(row[i]) for row in table) for i in range(len(ESTIMATE_COLUMNS))]
    for number, row in enumerate(table):
        cells = [row[0].ljust(widths[0])] + [
            cell.rjust(width) for cell, width in zip(row[1:], widths[1:])
        ]
        print("  ".join(cells).rstrip(), file=stream)
        if number == 0 or number == len(table) - 2:
            print("  ".join("-" * width for width in widths), file=stream)
    _print_notes(plan, stream)


def _print_notes(plan: CostEstimate, stream: TextIO) -> None:
    """Under the table: the models without a price, the dry run's failures."""
    unpriced = [
        label for label, model in plan.models.items() if model.requests and model.price is None
    ]
    if unpriced:
        print(
            for_terminal(
                f"no price for {', '.join(unpriced)}: add `price:` to the model in --config "
                "(chat: input_per_million and output_per_million; embeddings: "
                "input_per_million)"
            ),
            file=stream,
        )
    if plan.dry_run_errors:
        why = "; ".join(
            f"{reason} ({counted(count, 'outcome')})"
            for reason, count in plan.dry_run_failures.items()
        )
        print(
            for_terminal(
                f"{counted(plan.dry_run_errors, 'metric outcome')} failed in the dry run"
                f"{': ' + why if why else ''} (bad samples are refused before any request, "
                "so they cost nothing in the run either)"
            ),
            file=stream,
        )
