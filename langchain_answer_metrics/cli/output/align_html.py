"""The HTML page of ``align``: agreement before and after on held-out rows, what was
fitted (judges' weights, threshold) and the examples chosen.

In the style of the calibrate and compare pages (:mod:`.analysis_html`): self-contained,
no script, a CSP that forbids any fetch, every text from the data escaped.
"""

from __future__ import annotations

import json
import time

from langchain_answer_metrics.analysis.alignment import AlignmentResult
from langchain_answer_metrics.cli.output.analysis_html import _page
from langchain_answer_metrics.cli.output.html_report import _e

_CLASSES = {"improved": "up", "worse": "down"}


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _gain_table(result: AlignmentResult) -> str:
    rows = "".join(
        f"<tr><td>{_e(name)}{' (lower is better)' if s.lower_is_better else ''}</td>"
        f'<td class="num">{_num(s.before)}</td><td class="num">{_num(s.after)}</td>'
        f'<td class="num">{_num(s.difference)}</td>'
        f'<td class="num">[{_num(s.ci_low)}, {_num(s.ci_high)}]</td>'
        f'<td class="{_CLASSES.get(s.finding, "")}">{_e(s.finding)}</td></tr>'
        for name, s in result.gain.statistics.items()
    )
    return (
        "<table><tr><th>statistic</th><th>before</th><th>after</th><th>difference</th>"
        f"<th>95% CI (paired bootstrap)</th><th>finding</th></tr>{rows}</table>"
    )


def _judges(result: AlignmentResult) -> str:
    rows = "".join(
        f'<tr><td>{_e(label)}</td><td class="num">{_num(fit.agreement)}</td>'
        f'<td class="num">{"dropped" if fit.weight == 0 else f"{fit.weight:.2f}"}</td></tr>'
        for label, fit in result.fit.judges.items()
    )
    return (
        "<table><tr><th>judge</th><th>agreement on the training rows</th><th>weight</th>"
        f"</tr>{rows}</table>"
    )


def _examples(result: AlignmentResult) -> str:
    parts = []
    for step, examples in result.fit.examples.items():
        rows = result.fit.example_rows.get(step, [])
        for number, example in enumerate(examples):
            source = rows[number] if number < len(rows) else "?"
            given = json.dumps(example["input"], ensure_ascii=False, indent=1)
            output = json.dumps(example["output"], ensure_ascii=False, indent=1)
            parts.append(
                f'<div class="sample"><h3>{_e(step)}: row {_e(source)}</h3>'
                f'<div class="pair"><div>{_e(given)}</div><div>{_e(output)}</div></div></div>'
            )
    return "".join(parts) or "<p>No example was chosen (no disagreement to learn from).</p>"


def render_alignment_html(result: AlignmentResult, *, source: str) -> str:
    """The ``align --report`` page for ``result`` (of the labelled file ``source``)."""
    gain, fitted_on = result.gain, result.aligned.fitted_on
    threshold = "-" if result.fit.threshold is None else f"{result.fit.threshold:.2f}"
    body = (
        f"<h1>Alignment: {_e(result.aligned.settings.get('name') or result.aligned.metric)}</h1>"
        f'<p class="meta">{_e(source)} · {fitted_on.rows} rows ({_e(fitted_on.label_type)} '
        f"labels, fingerprint {_e(fitted_on.fingerprint)}) · {_e(result.split)} · "
        f"{time.strftime('%Y-%m-%d %H:%M')}</p>"
        f'<p class="big">{_e(gain.finding)}</p><p>{_e(gain.summary())}</p>'
        f"<h2>Agreement with the labels, held-out rows only</h2>{_gain_table(result)}"
        f'<p class="stat">{gain.n} held-out rows; {result.left_out} left out (no score '
        "before or after). Each row was scored after by a fit that never saw it.</p>"
        f"<h2>Judges</h2>{_judges(result)}<p>Pass threshold: {_e(threshold)}</p>"
        f"<h2>Cost</h2><p>{_e(result.cost())} (the estimate was made before any request)</p>"
        f"<h2>Examples chosen</h2>{_examples(result)}"
        f'<p class="meta">Aligned metric file: {_e(result.path or "(not saved)")}</p>'
    )
    return _page(f"Alignment: {result.aligned.metric}", body)
