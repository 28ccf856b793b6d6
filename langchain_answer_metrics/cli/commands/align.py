"""``answer-metrics align``: fit a metric's judges to human labels, and show the gain
measured on held-out rows.

    answer-metrics align labelled.jsonl --label-col human --metric aspect_critic \\
        --criterion "The response is polite." --config models.yaml --folds 5 \\
        --out aligned.yaml --report align.html

The procedure is :func:`langchain_answer_metrics.analysis.alignment.align`'s; this face
reads the file, builds the metric as ``evaluate`` does, prints and writes. The fit needs
every labelled row at once (it keeps each one's sample, label, explanation and result), so
its memory grows with the labelled rows; the file is read a line at a time, and nothing
else of a row is kept. ``--scores FILE`` keeps every score as it arrives (the runner's
``checkpoint=``); the same command resumes from it, sending only what is missing. ``--out`` is the
aligned metric (YAML, or JSON by suffix): ``evaluate``/``calibrate --metric-file`` and
``load_aligned`` read it.

Exit codes: 0 aligned (whatever the finding: it is printed); 2 bad arguments or data;
5 stopped by ``--max-cost`` (refused up front when the estimate is past it).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

import langchain_answer_metrics.cli.datasets as datasets
from langchain_answer_metrics.analysis.alignment import AlignmentStopped, align
from langchain_answer_metrics.analysis.alignment_fit import rebuilt
from langchain_answer_metrics.cli.command_options import AlignOptions
from langchain_answer_metrics.cli.datasets import DatasetRow
from langchain_answer_metrics.cli.exits import EXIT_OK, EXIT_STOPPED
from langchain_answer_metrics.cli.labels import read_labels, rows_by_id
from langchain_answer_metrics.cli.options import LOADER_FLAGS, UsageError
from langchain_answer_metrics.cli.output.align_html import render_alignment_html
from langchain_answer_metrics.cli.output.alignment import alignment_json, print_alignment
from langchain_answer_metrics.cli.output.files import write_output
from langchain_answer_metrics.cli.output.printing import for_terminal
from langchain_answer_metrics.cli.plans import build_metrics, embeddings
from langchain_answer_metrics.cli.run_checks import (
    check_writable,
    chosen_metrics,
    metric_entries,
    per_metric_values,
)
from langchain_answer_metrics.metrics.base import JudgedMetric
from langchain_answer_metrics.run.records.saved import ForeignFileError, SavedRecords

HELD_OUT = {"test", "holdout", "held-out", "heldout", "true", "yes", "1"}


def _column(options: AlignOptions, name: str) -> dict[str, Any]:
    """Each row id's value in column ``name`` (rows without it left out)."""
    return {
        row_id: record[name]
        for row_id, _, record in rows_by_id(options.data, options.columns)
        if record.get(name) not in (None, "")
    }


def _metric(options: AlignOptions) -> tuple[JudgedMetric, Any, Any]:
    """The metric to align, built as ``evaluate`` builds it; its prices; the embedders
    that choose examples (``--select similar``)."""
    choice = options.metrics
    names = chosen_metrics(choice.metric, [], metric_entries(choice, options.judges))
    if len(names) != 1:
        raise UsageError(f"align takes one --metric, got {', '.join(names)}")
    plans = build_metrics(names, metrics=choice, judges=options.judges)
    metric = plans[0].metric
    if not isinstance(metric, JudgedMetric):
        raise UsageError(f"{names[0]} has no judges to align")
    threshold = per_metric_values(choice.threshold, [metric.key], "--threshold").get(metric.key)
    if threshold is not None:
        metric = rebuilt(
            metric,
            judges=metric.llm,
            new_examples={},
            judge_weights=metric.judge_weights,
            threshold=threshold,
        )
    # select=similar: the configured embedding model, else the bundled local one.
    embedders = embeddings(options.judges, plans.panel)[0] if options.select == "similar" else None
    return metric, getattr(plans.panel, "prices", None), embedders


def _labelled(options: AlignOptions, metric: JudgedMetric) -> Iterator[dict[str, Any]]:
    """The labelled rows, as ``align`` reads them (the sample's fields, its label, its
    explanation), made one at a time as ``align`` takes them: it keeps what it needs of
    each (:class:`~..analysis.alignment_examples.LabelledRow`), never the file's rows.
    The file is read through once first, so a bad file is refused before any model is
    built (its whole-file checks end the first reading)."""
    labels = read_labels(options.data, options.columns, options.label_col)
    column = options.explanation_col
    explanations = _column(options, column) if column else {}

    def rows() -> Iterator[DatasetRow]:
        return datasets.iter_rows(
            options.data,
            options.columns.mapping(),
            format=options.columns.format,
            required=metric.required_fields,
            flags=LOADER_FLAGS,
        )

    for _ in rows():
        pass
    return (
        {
            "id": row.id,
            **row.sample.model_dump(exclude_none=True),
            "label": labels[row.id],
            "explanation": explanations.get(row.id),
        }
        for row in rows()
        if row.id in labels
    )


def run_align(options: AlignOptions) -> int:
    """``align``: fit, measure on held-out rows, write the aligned metric; the exit code."""
    for output, flag in (
        (options.out, "--out"),
        (options.scores, "--scores"),
        (options.report, "--report"),
        (options.json, "--json"),
    ):
        check_writable(output, flag)
    if options.holdout is not None and options.holdout_col is not None:
        raise UsageError("give --holdout or --holdout-col, not both")
    if options.scores is not None:
        # A file that is not one of ours is refused under the option's name, before the
        # estimate and any request (the runner would call it a "checkpoint" mid-run).
        try:
            SavedRecords.load(options.scores, what="--scores")
        except ForeignFileError as error:
            raise UsageError(str(error)) from None
    metric, prices, embedders = _metric(options)
    labelled = _labelled(options, metric)
    holdout: Any = options.holdout
    if options.holdout_col is not None:
        marks = _column(options, options.holdout_col)
        holdout = [i for i, v in marks.items() if str(v).strip().lower() in HELD_OUT]
    say = None if options.quiet else (lambda line: print(for_terminal(line), file=sys.stderr))
    try:
        result = align(
            metric,
            labelled,
            label_field="label",
            explanation_field="explanation",
            folds=options.folds,
            holdout=holdout,
            examples_per_step=options.examples_per_step,
            select=options.select,
            embeddings=embedders,
            weights=options.weights,
            threshold=options.fit_threshold,
            seed=options.seed,
            max_cost=options.limits.max_cost,
            prices=prices,
            max_concurrency=options.limits.max_concurrency,
            on_progress=say,
            checkpoint=options.scores,
        )
    except AlignmentStopped as stop:
        kept = (
            f"the scores so far are kept in {options.scores}: rerun the same command to resume"
            if options.scores is not None
            else "nothing written (--scores FILE keeps the scores, to resume)"
        )
        print(
            for_terminal(
                f"answer-metrics: {stop} (spent ${stop.spent:.4f}, {stop.requests} requests); "
                f"{kept}"
            ),
            file=sys.stderr,
        )
        return EXIT_STOPPED
    except ValueError as error:
        raise UsageError(str(error)) from None
    path = result.save(options.out)
    print_alignment(result)
    print(f"aligned metric: {path}", file=sys.stderr)
    write_output(
        options.json, "--json", json.dumps(alignment_json(result), indent=2, ensure_ascii=False)
    )
    write_output(
        options.report, "--report", render_alignment_html(result, source=str(options.data))
    )
    return EXIT_OK
