"""``answer-metrics align``: fit a metric's judges to human labels, and show the gain
measured on held-out rows.

    answer-metrics align labelled.jsonl --label-col human --metric aspect_critic \\
        --criterion "The response is polite." --config models.yaml --folds 5 \\
        --out aligned.yaml --report align.html

The procedure is :func:`langchain_answer_metrics.analysis.alignment.align`'s; this face
reads the file, builds the metric as ``evaluate`` does, prints and writes. ``--out`` is the
aligned metric (YAML, or JSON by suffix): ``evaluate``/``calibrate --metric-file`` and
``load_aligned`` read it.

Exit codes: 0 aligned (whatever the finding: it is printed); 2 bad arguments or data;
5 stopped by ``--max-cost`` (refused up front when the estimate is past it).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from langchain_answer_metrics.analysis.alignment import AlignmentResult, AlignmentStopped, align
from langchain_answer_metrics.analysis.alignment_fit import rebuilt
from langchain_answer_metrics.cli.align_html import render_alignment_html
from langchain_answer_metrics.cli.datasets import load_rows
from langchain_answer_metrics.cli.declared import metric_entries
from langchain_answer_metrics.cli.labels import read_labels, rows_by_id
from langchain_answer_metrics.cli.options import (
    LOADER_FLAGS,
    UsageError,
    column_mapping,
)
from langchain_answer_metrics.cli.plans import _embeddings, build_metrics, chosen_metrics
from langchain_answer_metrics.cli.printing import for_terminal
from langchain_answer_metrics.cli.run import EXIT_OK, EXIT_STOPPED
from langchain_answer_metrics.cli.run_checks import _check_writable
from langchain_answer_metrics.cli.subcommand_args import add_align_parser as add_align_parser
from langchain_answer_metrics.metrics.base import JudgedMetric

HELD_OUT = {"test", "holdout", "held-out", "heldout", "true", "yes", "1"}


def _column(data: Path, args: argparse.Namespace, name: str) -> dict[str, Any]:
    """Each row id's value in column ``name`` (rows without it left out)."""
    return {
        row_id: record[name]
        for row_id, _, record in rows_by_id(data, args)
        if record.get(name) not in (None, "")
    }


def _metric(args: argparse.Namespace) -> tuple[JudgedMetric, Any, Any]:
    names = chosen_metrics(args.metric, [], metric_entries(args))
    if len(names) != 1:
        raise UsageError(f"align takes one --metric, got {', '.join(names)}")
    plans = build_metrics(args, names)
    metric = plans[0].metric
    if not isinstance(metric, JudgedMetric):
        raise UsageError(f"{names[0]} has no judges to align")
    if args.threshold is not None:
        metric = rebuilt(
            metric,
            judges=metric.llm,
            new_examples={},
            judge_weights=metric.judge_weights,
            threshold=args.threshold,
        )
    # select=similar: the configured embedding model, else the bundled local one.
    embedders = _embeddings(args, plans.panel)[0] if args.select == "similar" else None
    return metric, getattr(plans.panel, "prices", None), embedders


def run_align(args: argparse.Namespace) -> int:
    data: Path = args.data
    for path, flag in ((args.out, "--out"), (args.report, "--report"), (args.json, "--json")):
        _check_writable(path, flag)
    if args.holdout is not None and args.holdout_col is not None:
        raise UsageError("give --holdout or --holdout-col, not both")
    metric, prices, embedders = _metric(args)
    labels = read_labels(data, args)
    explanations = _column(data, args, args.explanation_col) if args.explanation_col else {}
    holdout: Any = args.holdout
    if args.holdout_col is not None:
        marks = _column(data, args, args.holdout_col)
        holdout = [i for i, v in marks.items() if str(v).strip().lower() in HELD_OUT]
    rows = load_rows(
        data,
        column_mapping(args),
        format=getattr(args, "format", None),
        required=metric.required_fields,
        flags=LOADER_FLAGS,
    )
    labelled = [
        {
            "id": row.id,
            **row.sample.model_dump(exclude_none=True),
            "label": labels[row.id],
            "explanation": explanations.get(row.id),
        }
        for row in rows
        if row.id in labels
    ]
    say = None if args.quiet else (lambda line: print(for_terminal(line), file=sys.stderr))
    try:
        result = align(
            metric,
            labelled,
            label_field="label",
            explanation_field="explanation",
            folds=args.folds,
            holdout=holdout,
            examples_per_step=args.examples_per_step,
            select=args.select,
            embeddings=embedders,
            weights=not args.no_weights,
            threshold=not args.no_threshold,
            seed=args.seed,
            max_cost=args.max_cost,
            prices=prices,
            max_concurrency=args.max_concurrency,
            on_progress=say,
        )
    except AlignmentStopped as stop:
        print(
            for_terminal(
                f"answer-metrics: {stop} (spent ${stop.spent:.4f}, "
                f"{stop.requests} requests); nothing written"
            ),
            file=sys.stderr,
        )
        return EXIT_STOPPED
    except ValueError as error:
        raise UsageError(str(error)) from None
    path = result.save(args.out)
    print_alignment(result)
    print(f"aligned metric: {path}", file=sys.stderr)
    if args.json is not None:
        args.json.write_text(
            json.dumps(alignment_json(result), indent=2, ensure_ascii=False) + "\n",
            encoding="utf-8",
        )
        print(f"json: {args.json}", file=sys.stderr)
    if args.report is not None:
        args.report.write_text(render_alignment_html(result, source=str(data)), encoding="utf-8")
        print(f"report: {args.report}", file=sys.stderr)
    return EXIT_OK


def alignment_json(result: AlignmentResult) -> dict[str, Any]:
    """What ``--json`` writes: the gain, the fit (without the metric object), the cost."""
    return {
        "finding": result.gain.finding,
        "gain": result.gain.model_dump(mode="json"),
        "split": result.split,
        "fit": result.fit.model_dump(mode="json", exclude={"metric"}),
        "estimate": result.estimate,
        "spent": result.spent,
        "left_out": result.left_out,
        "aligned_metric": result.path,
    }


def print_alignment(result: AlignmentResult, stream: TextIO | None = None) -> None:
    """The before/after table, the finding, and what was fitted (on stdout by default,
    looked up when called: this module may be imported while stdout is redirected)."""
    stream = stream or sys.stdout

    def show(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    rows = [("statistic", "before", "after", "difference", "95% CI", "finding")]
    for name, stat in result.gain.statistics.items():
        rows.append(
            (
                name,
                show(stat.before),
                show(stat.after),
                show(stat.difference),
                f"[{show(stat.ci_low)}, {show(stat.ci_high)}]",
                stat.finding,
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    print(f"cost: {result.cost()}", file=stream)
    for number, row in enumerate(rows):
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip(), file=stream)
        if number == 0:
            print("  ".join("-" * w for w in widths), file=stream)
    print(for_terminal(result.summary()), file=stream)
