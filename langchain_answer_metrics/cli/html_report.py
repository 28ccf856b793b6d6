"""The HTML report of a run, rebuilt from its per-sample records alone.

    >>> overviews = overview(records, ["faithfulness"], thresholds={"faithfulness": 0.7})
    >>> Path("report.html").write_text(render_html(records, overviews, source="qa.jsonl"))

The page is self-contained (inline CSS and SVG, no script, no external asset) and escapes
every text that comes from the dataset or from a judge. It reads the records of
:mod:`langchain_answer_metrics.cli.records`: claims with their verdicts, votes, errors.
"""

from __future__ import annotations

import html
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from langchain_answer_metrics.cli.options import UsageError
from langchain_answer_metrics.cli.records import (
    ClaimRecord,
    MetricOverview,
    MetricRecord,
    SampleRecord,
    VoteRecord,
)
from langchain_answer_metrics.cli.spend_view import spend_html, spend_of
from langchain_answer_metrics.metrics.explain import counted
from langchain_answer_metrics.metrics.registry import METRICS
from langchain_answer_metrics.result import band_for
from langchain_answer_metrics.sample import without_surrogates
from langchain_answer_metrics.spend import Pricing


def _e(text: object) -> str:
    """Escape any text for HTML content and attribute values."""
    return html.escape(without_surrogates(str(text)), quote=True)


def _score(score: float | None) -> str:
    return "–" if score is None else f"{score:.2f}"


def _band_class(score: float | None) -> str:
    return "band-none" if score is None else f"band-{band_for(score)}"


def _not_applicable(entry: MetricRecord) -> str:
    """A score that is not there because the metric does not apply (not an error)."""
    why = "no claims (abstention)" if entry.not_applicable == "no_claims" else entry.not_applicable
    return f'<span class="score band-none not-applicable">n/a — {_e(why)}</span>'


_CSS = """
:root { --ok:#1a7f37; --good:#4c9a2a; --mid:#b7791f; --bad:#c53030; --muted:#6b7280;
        --line:#e5e7eb; --bg:#f9fafb; }
* { box-sizing: border-box; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", "Noto Sans", sans-serif;
       margin: 0 auto; max-width: 1100px; padding: 24px; color: #111827; }
h1 { font-size: 1.6em; margin: 0 0 4px; } h2 { margin-top: 32px; }
.meta { color: var(--muted); margin: 0 0 16px; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(320px, 1fr)); gap: 16px; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; background: #fff; }
.card h3 { margin: 0 0 6px; font-size: 1.05em; }
.big { font-size: 2em; font-weight: 650; }
.stat { color: var(--muted); font-size: .9em; }
.models { margin: 6px 0 0; padding: 0; list-style: none; font-size: .9em; }
.gate-fail { color: var(--bad); font-weight: 600; }
table { border-collapse: collapse; width: 100%; font-size: .92em; }
th, td { border-bottom: 1px solid var(--line); padding: 6px 8px; text-align: left;
         vertical-align: top; }
th { background: var(--bg); }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.score { display: inline-block; min-width: 3.2em; padding: 1px 8px; border-radius: 10px;
         color: #fff; font-weight: 600; text-align: center; }
.band-excellent { background: var(--ok); } .band-good { background: var(--good); }
.band-moderate { background: var(--mid); } .band-poor { background: var(--bad); }
.band-none { background: var(--muted); }
.sample { border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px;
          margin: 16px 0; background: #fff; }
.sample h3 { margin: 0 0 8px; }
.sample dl { display: grid; grid-template-columns: 8em 1fr; gap: 4px 12px; margin: 0; }
.sample dt { color: var(--muted); } .sample dd { margin: 0; white-space: pre-wrap; }
.metric { border-top: 1px dashed var(--line); margin-top: 10px; padding-top: 8px; }
.metric h4 { margin: 0 0 4px; font-size: 1em; }
.reason { margin: 2px 0 6px; }
.error { color: var(--bad); }
.claims { list-style: none; padding: 0; margin: 4px 0; }
.claims li { border-left: 4px solid var(--muted); padding: 3px 8px; margin: 4px 0;
             background: var(--bg); }
.claims li.v-supported { border-color: var(--ok); }
.claims li.v-contradicted { border-color: var(--bad); }
.claims li.v-neutral { border-color: var(--mid); }
.verdict { font-size: .8em; font-weight: 700; text-transform: uppercase; margin-right: 6px; }
.v-supported .verdict, .vote-PASS { color: var(--ok); }
.v-contradicted .verdict, .vote-FAIL { color: var(--bad); }
.v-neutral .verdict { color: var(--mid); }
.why { color: #374151; font-size: .9em; }
.side { color: var(--muted); font-size: .85em; margin: 6px 0 0; }
svg.hist { display: block; width: 100%; max-width: 320px; height: auto; margin-top: 8px; }
svg.hist rect.bar { fill: #60a5fa; } svg.hist text { font-size: 9px; fill: var(--muted); }
a { color: #1d4ed8; }
"""


def _histogram_svg(counts: Sequence[int]) -> str:
    """Ten bars (0–0.1 … 0.9–1.0) as inline SVG, with the count on each bar."""
    width, height, gap = 28, 60, 4
    peak = max(counts) or 1
    bars = []
    for index, count in enumerate(counts):
        bar = round(height * count / peak)
        x = index * (width + gap)
        label = f"{index / 10:.1f}–{(index + 1) / 10:.1f}: {count}"
        bars.append(
            f'<rect class="bar" x="{x}" y="{height - bar + 12}" width="{width}" '
            f'height="{bar}"><title>{label}</title></rect>'
            f'<text x="{x + width / 2}" y="{height - bar + 10}" text-anchor="middle">'
            f"{count or ''}</text>"
        )
    total_width = 10 * (width + gap)
    axis = (
        f'<text x="0" y="{height + 24}">0</text>'
        f'<text x="{total_width - gap}" y="{height + 24}" text-anchor="end">1</text>'
    )
    return (
        f'<svg class="hist" role="img" aria-label="score distribution" width="{total_width}" '
        f'height="{height + 28}" viewBox="0 0 {total_width} {height + 28}">'
        f"{''.join(bars)}{axis}</svg>"
    )


def _summary_card(item: MetricOverview, fail_under: float | None) -> str:
    summary = item.summary
    lines = []
    if summary.ci_low is not None and summary.ci_high is not None:
        lines.append(f"95% CI {summary.ci_low:.3f}–{summary.ci_high:.3f}")
    if summary.pass_rate is not None and summary.threshold is not None:
        lines.append(f"pass rate {summary.pass_rate:.0%} at ≥ {summary.threshold:.2f}")
    lines.append(f"{summary.scored} scored · {counted(summary.error_count, 'error')}")
    if summary.not_applicable:
        lines.append(f"{summary.not_applicable} not applicable (left out of the mean)")
    if summary.no_claims:
        lines.append(f"{counted(summary.no_claims, 'response')} with no claims (abstentions)")
    gate = ""
    if fail_under is not None and (summary.mean is None or summary.mean < fail_under):
        gate = f'<p class="gate-fail">below --fail-under {fail_under:.2f}</p>'
    models = "".join(
        f"<li>{_e(model)}: <b>{_score(mean)}</b></li>" for model, mean in item.per_model.items()
    )
    return (
        f'<div class="card summary-card" data-metric="{_e(summary.key)}">'
        f"<h3>{_e(summary.key)}</h3>"
        f'<div class="big">{_score(summary.mean)}</div>'
        f'<div class="stat">{"<br>".join(_e(line) for line in lines)}</div>{gate}'
        f"{_histogram_svg(item.histogram)}"
        f'<ul class="models">{models}</ul></div>'
    )


def _overview_table(records: Sequence[SampleRecord], keys: Sequence[str]) -> str:
    head = "".join(f'<th class="num">{_e(key)}</th>' for key in keys)
    rows = []
    for number, record in enumerate(records, start=1):
        cells = []
        for key in keys:
            entry = record.metrics.get(key)
            if entry is None:
                cells.append('<td class="num">–</td>')
            elif entry.error is not None:
                cells.append('<td class="num error">error</td>')
            elif entry.not_applicable is not None:
                cells.append(f'<td class="num">{_not_applicable(entry)}</td>')
            else:
                cells.append(
                    f'<td class="num"><span class="score {_band_class(entry.score)}">'
                    f"{_score(entry.score)}</span></td>"
                )
        question = record.user_input or record.response or ""
        rows.append(
            f'<tr class="sample-row"><td><a href="#s-{number}">{_e(record.id)}</a></td>'
            f"<td>{_e(_shorten(question, 90))}</td>{''.join(cells)}</tr>"
        )
    return (
        f'<table class="overview"><thead><tr><th>id</th><th>question</th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


_SIDE_TITLES = {
    "response": "claims of the response",
    "reference": "claims of the reference, checked against the response",
}


def _claims_html(claims: Sequence[ClaimRecord]) -> str:
    parts = []
    groups: dict[tuple[str, str], list[ClaimRecord]] = {}
    for claim in claims:
        groups.setdefault((claim.model, claim.side), []).append(claim)
    for (model, side), items in groups.items():
        parts.append(
            f'<p class="side">{_e(model)} · {_e(_SIDE_TITLES[side])}</p><ul class="claims">'
        )
        for claim in items:
            evidence = f" <i>Evidence:</i> “{_e(claim.evidence)}”" if claim.evidence.strip() else ""
            parts.append(
                f'<li class="claim v-{_e(claim.verdict)}"><span class="verdict">'
                f"{_e(claim.verdict)}</span>{_e(claim.claim)}"
                f'<div class="why">{_e(claim.reason)}{evidence}</div></li>'
            )
        parts.append("</ul>")
    return "".join(parts)


def _votes_html(votes: Sequence[VoteRecord]) -> str:
    parts = ['<ul class="claims">']
    for vote in votes:
        reasons = "".join(
            f'<div class="why"><span class="vote-{_e(v)}">{_e(v)}</span>: {_e(r)}</div>'
            for v, r in zip(vote.votes, vote.reasons)
        )
        parts.append(
            f'<li><span class="verdict vote-{_e(vote.verdict)}">{_e(vote.verdict)}</span>'
            f"{_e(vote.model)}{reasons}</li>"
        )
    parts.append("</ul>")
    return "".join(parts)


def _metric_html(
    key: str, entry: MetricRecord, anchor: str = "", same_claims: tuple[str, str] | None = None
) -> str:
    """One metric of a sample; ``same_claims`` (key, anchor) links to the metric above
    whose claims these are (AnswerCorrectness's are FactualCorrectness's) instead of
    listing them again."""
    if entry.error is not None:
        return (
            f'<div class="metric"><h4>{_e(key)} <span class="score band-none">error</span></h4>'
            f'<p class="reason error">{_e(entry.error.type)}: {_e(entry.error.message)}</p></div>'
        )
    components = " · ".join(f"{_e(name)} {_score(s)}" for name, s in entry.components.items())
    models = " · ".join(f"{_e(model)} {_score(s)}" for model, s in entry.per_model.items())
    claims = _claims_html(entry.claims)
    if same_claims is not None:
        claims = (
            f'<p class="reason">claims: the same as <a href="#{_e(same_claims[1])}">'
            f"{_e(same_claims[0])}</a>, above</p>"
        )
    excluded = "".join(
        f'<p class="reason error">excluded {_e(item.get("model", ""))} at '
        f"{_e(item.get('step', ''))}: {_e(item.get('error', ''))}</p>"
        for item in entry.excluded
    )
    score = f'<span class="score {_band_class(entry.score)}">{_score(entry.score)}</span>'
    return (
        f'<div class="metric" data-metric="{_e(key)}"{anchor}><h4>{_e(key)} '
        f"{score if entry.not_applicable is None else _not_applicable(entry)} "
        f'<span class="stat">{_e(entry.band or "")}{" · " + components if components else ""}'
        f"{' · ' + models if models and len(entry.per_model) > 1 else ''}</span></h4>"
        f'<p class="reason">{_e(entry.reason)}</p>{excluded}'
        f"{claims}{_votes_html(entry.votes) if entry.votes else ''}</div>"
    )


def _sample_html(number: int, record: SampleRecord, keys: Sequence[str]) -> str:
    fields = [
        ("Question", record.user_input),
        ("Response", record.response),
        ("Reference", record.reference),
    ]
    listing = "".join(
        f"<dt>{name}</dt><dd>{_e(value)}</dd>" for name, value in fields if value is not None
    )
    contexts = ""
    if record.retrieved_contexts:
        items = "".join(f"<li>{_e(context)}</li>" for context in record.retrieved_contexts)
        contexts = (
            f"<details><summary>Retrieved contexts ({len(record.retrieved_contexts)})"
            f"</summary><ol>{items}</ol></details>"
        )
    parts: list[str] = []
    shown: list[tuple[str, MetricRecord]] = []  # metrics listed so far, with their claims
    for key in keys:
        entry = record.metrics.get(key)
        if entry is None:
            continue
        anchor = f"s-{number}-{key}"
        same = next(
            (other for other, earlier in shown if entry.claims and earlier.claims == entry.claims),
            None,
        )
        parts.append(
            _metric_html(
                key, entry, f' id="{_e(anchor)}"',
                (same, f"s-{number}-{same}") if same is not None else None,
            )
        )
        shown.append((key, entry))
    metrics = "".join(parts)
    return (
        f'<section class="sample" id="s-{number}"><h3>#{number} · {_e(record.id)}</h3>'
        f"<dl>{listing}</dl>{contexts}{metrics}</section>"
    )


def render_html(
    records: Sequence[SampleRecord],
    overviews: Sequence[MetricOverview],
    *,
    source: str,
    models: Sequence[str] = (),
    fail_under: Mapping[str, float] | None = None,
    generated: str = "",
    pricing: Pricing | None = None,
) -> str:
    """The whole report: summary cards with distributions, the spend of its samples (per
    model and per metric, priced by ``pricing``), an index table, every sample."""
    keys = [item.summary.key for item in overviews]
    spent = [record.metrics for record in records]
    gates = fail_under or {}
    cards = "".join(_summary_card(item, gates.get(item.summary.key)) for item in overviews)
    samples = "".join(
        _sample_html(number, record, keys) for number, record in enumerate(records, start=1)
    )
    meta = f"{counted(len(records), 'sample')} from {_e(source)}"
    if models:
        meta += " · models: " + ", ".join(_e(model) for model in models)
    if generated:
        meta += f" · {_e(generated)}"
    # The CSP forbids scripts and any fetch: the page shows dataset text, and must not be
    # able to run or load anything even if a bug let some of it through unescaped.
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; img-src data:\">"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>answer-metrics report · {_e(source)}</title><style>{_CSS}</style></head>"
        f'<body><h1>answer-metrics report</h1><p class="meta">{meta}</p>'
        f'<h2 id="summary">Summary</h2><div class="cards">{cards}</div>'
        f'<h2 id="spend">Spend</h2>{spend_html(spend_of(spent, pricing), keys)}'
        f'<h2 id="index">Samples</h2>{_overview_table(records, keys)}'
        f'<h2 id="details">Details</h2>{samples}</body></html>\n'
    )


def write_report(
    path: Path,
    records: Sequence[SampleRecord],
    overviews: Sequence[MetricOverview],
    data: Path,
    gates: Mapping[str, float],
    pricing: Pricing | None = None,
) -> None:
    """Write the report of a run to ``--report`` ``path``."""
    models = sorted(
        {model_name(model) for record in records for entry in record.metrics.values()
         for model in entry.per_model}
    )  # fmt: skip
    page = render_html(
        records, overviews, source=str(data), models=models, fail_under=gates,
        generated=time.strftime("%Y-%m-%d %H:%M"), pricing=pricing,
    )  # fmt: skip
    try:
        path.write_text(page, encoding="utf-8")
    except OSError as error:
        raise UsageError(f"--report {path}: cannot write it ({error.strerror})") from None
    print(f"report: {path}", file=sys.stderr)


def model_name(label: str) -> str:
    """``factual_correctness/judge-a`` (AnswerCorrectness's per-model key) -> ``judge-a``,
    so the report's header lists each model once; a label with a slash of its own
    (``openai/gpt-4o``) is kept."""
    component, slash, model = label.partition("/")
    return model if slash and component in METRICS else label
