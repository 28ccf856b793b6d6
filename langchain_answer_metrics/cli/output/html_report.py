"""The HTML report of a run, rebuilt from its per-sample records alone.

    >>> overviews = overview(records, ["faithfulness"], thresholds={"faithfulness": 0.7})
    >>> Path("report.html").write_text(render_html(records, overviews, source="qa.jsonl"))

The page is self-contained (inline CSS and SVG, no script, no external asset) and escapes
every text that comes from the dataset or from a judge. It reads the records of
:mod:`langchain_answer_metrics.cli.records`: claims with their verdicts, votes, errors.
"""

from __future__ import annotations

import html
import itertools
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_answer_metrics.checkpoints import write_atomically
from langchain_answer_metrics.cli.options import UsageError
from langchain_answer_metrics.cli.output.report_style import REPORT_CSS as _CSS
from langchain_answer_metrics.cli.output.spend_view import spend_html, spend_of
from langchain_answer_metrics.cli.output.trajectory_html import judged_steps_html, trajectory_html
from langchain_answer_metrics.cli.records import (
    ClaimRecord,
    ContextRecord,
    MetricOverview,
    MetricRecord,
    SampleRecord,
    VoteRecord,
)
from langchain_answer_metrics.core.result import band_for
from langchain_answer_metrics.core.sample import without_surrogates
from langchain_answer_metrics.metrics.explain import counted
from langchain_answer_metrics.metrics.registry import METRICS
from langchain_answer_metrics.run.spend import Pricing


def _e(text: object) -> str:
    """Escape any text for HTML content and attribute values."""
    return html.escape(without_surrogates(str(text)), quote=True)


def _score(score: float | None) -> str:
    return "–" if score is None else f"{score:.2f}"


def _band_class(score: float | None) -> str:
    return "band-none" if score is None else f"band-{band_for(score)}"


def _not_applicable(entry: MetricRecord) -> str:
    """A score that is not there because the metric does not apply (not an error)."""
    why = entry.not_applicable or ""
    if why == "no_claims":
        why = "no claims (abstention)" if entry.no_claims else "no claims"
    return f'<span class="score band-none not-applicable">n/a — {_e(why)}</span>'


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


def _overview_table(records: Iterable[SampleRecord], keys: Sequence[str]) -> Iterator[str]:
    head = "".join(f'<th class="num">{_e(key)}</th>' for key in keys)
    yield (
        f'<table class="overview"><thead><tr><th>id</th><th>question</th>{head}</tr></thead><tbody>'
    )
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
        yield (
            f'<tr class="sample-row"><td><a href="#s-{number}">{_e(record.id)}</a></td>'
            f"<td>{_e(_shorten(question, 90))}</td>{''.join(cells)}</tr>"
        )
    yield "</tbody></table>"


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
            f'<div class="why"><span class="vote-{_e(str(v))}">{_e(str(v))}</span>: {_e(r)}</div>'
            for v, r in zip(vote.votes, vote.reasons)
        )
        verdict = _e(str(vote.verdict))
        parts.append(
            f'<li><span class="verdict vote-{verdict}">{verdict}</span>'
            f"{_e(vote.model)}{reasons}</li>"
        )
    parts.append("</ul>")
    return "".join(parts)


def _contexts_html(items: Sequence[ContextRecord], texts: Sequence[str]) -> str:
    """Each judge's verdict on each context (its text from the sample), styled as claims."""
    parts: list[str] = []
    groups: dict[str, list[ContextRecord]] = {}
    for item in items:
        groups.setdefault(item.model, []).append(item)
    for model, judged in groups.items():
        parts.append(f'<p class="side">{_e(model)} · contexts</p><ul class="claims">')
        for item in judged:
            good = item.verdict in ("useful", "relevant")  # the verdicts that count
            text = texts[item.rank - 1] if 0 < item.rank <= len(texts) else ""
            parts.append(
                f'<li class="context v-{"supported" if good else "contradicted"}">'
                f'<span class="verdict">{_e(item.verdict)}</span>#{item.rank} '
                f'{_e(_shorten(text, 200))}<div class="why">{_e(item.reason)}</div></li>'
            )
        parts.append("</ul>")
    return "".join(parts)


def _metric_html(
    key: str,
    entry: MetricRecord,
    anchor: str = "",
    same_claims: tuple[str, str] | None = None,
    texts: Sequence[str] = (),
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
        f"{claims}{_votes_html(entry.votes) if entry.votes else ''}"
        f"{_contexts_html(entry.contexts, texts)}{trajectory_html(entry.trajectory)}"
        f"{judged_steps_html(entry.judged_steps)}</div>"
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
                key,
                entry,
                f' id="{_e(anchor)}"',
                (same, f"s-{number}-{same}") if same is not None else None,
                record.retrieved_contexts or (),
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
    return "".join(
        _page(
            lambda: records,
            overviews,
            source=source,
            models=models,
            fail_under=fail_under,
            generated=generated,
            pricing=pricing,
        )
    )


def _page(
    records: Callable[[], Iterable[SampleRecord]],
    overviews: Sequence[MetricOverview],
    *,
    source: str,
    models: Sequence[str] | None = (),
    fail_under: Mapping[str, float] | None = None,
    generated: str = "",
    pricing: Pricing | None = None,
    checks: Iterable[Mapping[str, Any]] = (),
) -> Iterator[str]:
    """The page of :func:`render_html` a piece at a time, reading ``records()`` three
    times (the spend, the index, the details) and keeping none of them; ``models=None``
    lists the models that scored them."""
    keys = [item.summary.key for item in overviews]
    count = 0
    found: set[str] = set()

    def spent() -> Iterator[Mapping[str, Any]]:
        nonlocal count
        for record in records():
            count += 1
            if models is None:
                found.update(model_name(m) for e in record.metrics.values() for m in e.per_model)
            yield record.metrics

    spend = spend_html(spend_of(itertools.chain(checks, spent()), pricing), keys)
    models = sorted(found) if models is None else models
    gates = fail_under or {}
    cards = "".join(_summary_card(item, gates.get(item.summary.key)) for item in overviews)
    meta = f"{counted(count, 'sample')} from {_e(source)}"
    if models:
        meta += " · models: " + ", ".join(_e(model) for model in models)
    if generated:
        meta += f" · {_e(generated)}"
    # The CSP forbids scripts and any fetch: the page shows dataset text, and must not be
    # able to run or load anything even if a bug let some of it through unescaped.
    yield (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; img-src data:\">"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>answer-metrics report · {_e(source)}</title><style>{_CSS}</style></head>"
        f'<body><h1>answer-metrics report</h1><p class="meta">{meta}</p>'
        f'<h2 id="summary">Summary</h2><div class="cards">{cards}</div>'
        f'<h2 id="spend">Spend</h2>{spend}'
        f'<h2 id="index">Samples</h2>'
    )
    yield from _overview_table(records(), keys)
    yield '<h2 id="details">Details</h2>'
    for number, record in enumerate(records(), start=1):
        yield _sample_html(number, record, keys)
    yield "</body></html>\n"


def write_report(
    path: Path,
    records: Callable[[], Iterable[SampleRecord]] | Sequence[SampleRecord],
    overviews: Sequence[MetricOverview],
    data: Path,
    gates: Mapping[str, float],
    pricing: Pricing | None = None,
    *,
    checks: Iterable[Mapping[str, Any]] = (),
) -> None:
    """Write the report of a run to ``--report`` ``path``, whole or not at all (a full
    disk leaves the previous report, or none). ``records`` may be a function that reads
    them again (from ``--out``) each time it is called: the page is written a sample at a
    time, so a run of any length is reported in flat memory. ``checks``: what the run
    spent beside its samples (the judges' check), in the spend table too."""
    read = records if callable(records) else (lambda: records)
    page = _page(
        read,
        overviews,
        source=str(data),
        models=None,
        fail_under=gates,
        generated=time.strftime("%Y-%m-%d %H:%M"),
        pricing=pricing,
        checks=checks,
    )
    try:
        write_atomically(path, page)
    except OSError as error:
        raise UsageError(
            f"--report {path}: cannot write it ({error.strerror or error}); "
            "any earlier report there is left as it was"
        ) from None
    print(f"report: {path}", file=sys.stderr)


def model_name(label: str) -> str:
    """``factual_correctness/judge-a`` (AnswerCorrectness's per-model key) -> ``judge-a``,
    so the report's header lists each model once; a label with a slash of its own
    (``openai/gpt-4o``) is kept."""
    component, slash, model = label.partition("/")
    return model if slash and component in METRICS else label
