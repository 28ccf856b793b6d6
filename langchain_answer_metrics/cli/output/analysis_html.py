"""The HTML pages of ``calibrate`` (ROC curve, calibration plot) and ``compare`` (diff).

Like the run report (:mod:`langchain_answer_metrics.cli.output.html_report`, whose style they
share): self-contained, inline CSS and SVG, no script, a CSP that forbids any fetch, and
every text from the data or a judge escaped.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from langchain_answer_metrics.analysis.calibration import (
    CalibrationReport,
    JudgeCalibration,
    MetricCalibration,
)
from langchain_answer_metrics.analysis.comparison import (
    COMPARISON_COLUMNS,
    Comparison,
    MetricComparison,
)
from langchain_answer_metrics.analysis.pairwise import PairwiseReport
from langchain_answer_metrics.cli.output.html_report import _CSS, _e

_EXTRA_CSS = """
svg.plot { width: 100%; max-width: 300px; height: auto; background: #fff;
           border: 1px solid var(--line); }
svg.plot .axis { stroke: #9ca3af; fill: none; } svg.plot .diag { stroke: #d1d5db;
           stroke-dasharray: 4 3; fill: none; }
svg.plot .curve { stroke: #2563eb; stroke-width: 2; fill: none; }
svg.plot circle { fill: #2563eb; } svg.plot text { font-size: 10px; fill: var(--muted); }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; }
.pair > div { background: var(--bg); padding: 8px; border-radius: 6px; white-space: pre-wrap; }
.up { color: var(--ok); font-weight: 600; } .down { color: var(--bad); font-weight: 600; }
"""
_SIZE, _PAD = 200, 28


def _page(title: str, body: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; img-src data:\">"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{_CSS}{_EXTRA_CSS}</style></head>"
        f"<body>{body}</body></html>\n"
    )


def _xy(x: float, y: float) -> str:
    return f"{_PAD + x * _SIZE:.1f},{_PAD + (1 - y) * _SIZE:.1f}"


def _plot(
    label: str, x_name: str, y_name: str, points: Sequence[tuple[float, float]], *, line: bool
) -> str:
    """A unit-square plot with the diagonal: a polyline (ROC) or dots (calibration)."""
    full = _SIZE + 2 * _PAD
    marks = (
        f'<polyline class="curve" points="{" ".join(_xy(x, y) for x, y in points)}"/>'
        if line
        else "".join(
            f'<circle cx="{_xy(x, y).split(",")[0]}" cy="{_xy(x, y).split(",")[1]}" r="4">'
            f"<title>{x:.2f} → {y:.2f}</title></circle>"
            for x, y in points
        )
    )
    return (
        f'<svg class="plot {_e(label.split()[0].lower())}" role="img" aria-label="{_e(label)}" '
        f'width="{full}" height="{full}" viewBox="0 0 {full} {full}">'
        f'<rect class="axis" x="{_PAD}" y="{_PAD}" width="{_SIZE}" height="{_SIZE}"/>'
        f'<line class="diag" x1="{_PAD}" y1="{_PAD + _SIZE}" x2="{_PAD + _SIZE}" y2="{_PAD}"/>'
        f"{marks}"
        f'<text x="{_PAD + _SIZE / 2}" y="{full - 6}" text-anchor="middle">{_e(x_name)}</text>'
        f'<text x="10" y="{_PAD + _SIZE / 2}" transform="rotate(-90 10 {_PAD + _SIZE / 2})" '
        f'text-anchor="middle">{_e(y_name)}</text>'
        f'<text x="{_PAD}" y="{_PAD - 8}">{_e(label)}</text></svg>'
    )


def _stat(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _judge_row(label: str, judge: JudgeCalibration) -> str:
    cells = "".join(
        f'<td class="num">{_stat(e.value)}'
        + (
            f'<br><span class="stat">[{_stat(e.ci_low)}, {_stat(e.ci_high)}]</span>'
            if e.ci_low is not None
            else ""
        )
        + "</td>"
        for e in judge.statistics.values()
    )
    return f'<tr><th>{_e(label)}</th><td class="num">{judge.n}</td>{cells}</tr>'


def _metric_section(metric: MetricCalibration) -> str:
    judges = {"aggregate": metric.aggregate, **metric.judges}
    names = list(metric.aggregate.statistics)
    head = "".join(f"<th>{_e(name)}</th>" for name in names)
    table = (
        f"<table><tr><th>judge</th><th>n</th>{head}</tr>"
        + "".join(_judge_row(label, judge) for label, judge in judges.items())
        + "</table>"
    )
    plots = ""
    if metric.aggregate.roc:
        plots += _plot(
            "ROC curve",
            "false positive rate",
            "true positive rate",
            [(fpr, tpr) for _, fpr, tpr in metric.aggregate.roc],
            line=True,
        )
    plots += _plot(
        "Calibration",
        "mean score",
        "mean human label",
        [(b.mean_score, b.mean_label) for b in metric.aggregate.bins],
        line=False,
    )
    extra = ""
    confusion = metric.aggregate.confusion
    if confusion is not None:
        extra += (
            f'<table class="confusion"><caption>confusion at score ≥ {confusion.threshold:.2f}'
            "</caption><tr><th></th><th>human pass</th><th>human fail</th></tr>"
            f'<tr><th>judge pass</th><td class="num">{confusion.tp}</td>'
            f'<td class="num">{confusion.fp}</td></tr>'
            f'<tr><th>judge fail</th><td class="num">{confusion.fn}</td>'
            f'<td class="num">{confusion.tn}</td></tr></table>'
        )
    agreement = metric.agreement
    if len(agreement.judges) >= 2:
        kappas = "".join(
            f"<li>{_e(pair)}: {_stat(value)}</li>"
            for pair, value in agreement.pairwise_kappa.items()
        )
        extra += (
            f"<p>Krippendorff's alpha: {_stat(agreement.alpha_interval)} (scores, "
            f"interval), {_stat(agreement.alpha_nominal)} (verdicts, nominal). "
            f"Cohen's kappa between judges:</p><ul>{kappas}</ul>"
        )
    worst = "".join(
        f'<div class="sample"><h3>{_e(item.id)}: human {item.label:.2f}, judges '
        f'{item.score:.2f}</h3><p class="why">{_e(item.response or "")}</p>'
        f'<p class="reason">{_e(item.reason)}</p><ul class="claims">'
        + "".join(f"<li>{_e(claim)}</li>" for claim in item.claims)
        + "</ul></div>"
        for item in metric.disagreements
    )
    return (
        f'<section class="metric-calibration"><h2>{_e(metric.key)}</h2>'
        f'<p class="meta">{_e(metric.label_type)} labels · threshold {metric.threshold:.2f} · '
        f"{metric.aggregate.n} scored · {metric.errors} failed"
        f"{f' · {metric.not_applicable} not applicable' if metric.not_applicable else ''}"
        f"</p>{table}"
        f'<div class="cards">{plots}</div>{extra}'
        f"<h3>Worst disagreements</h3>{worst or '<p>none</p>'}</section>"
    )


def render_calibration_html(report: CalibrationReport, *, source: str) -> str:
    body = (
        "<h1>answer-metrics calibration</h1>"
        f'<p class="meta">{_e(source)} · {_e(time.strftime("%Y-%m-%d %H:%M"))}</p>'
        + "".join(_metric_section(metric) for metric in report.metrics.values())
    )
    return _page(f"answer-metrics calibration · {source}", body)


def _diff_row(key: str, m: MetricComparison) -> str:
    kind = "down" if (m.mean_diff or 0) < 0 else "up"
    ci = f"[{_stat(m.ci_low)}, {_stat(m.ci_high)}]" if m.ci_low is not None else "–"
    cells = [m.n_paired, _stat(m.mean_baseline), _stat(m.mean_candidate)]
    return (
        f"<tr><th>{_e(key)}</th>"
        + "".join(f'<td class="num">{c}</td>' for c in cells)
        + f'<td class="num {kind}">{_stat(m.mean_diff)}</td><td class="num">{ci}</td>'
        + "".join(
            f'<td class="num">{c}</td>'
            for c in (_stat(m.p_value), m.improved, m.regressed, m.unchanged, m.unpaired, m.errors)
        )
        + "</tr>"
    )


def _pairwise_html(report: PairwiseReport) -> str:
    """The judged preference: wins, losses, ties, the win rate, position bias per judge,
    and the pairs where the preference goes against a metric's scores."""
    rate = "-" if report.win_rate is None else f"{report.win_rate:.3f}"
    if report.ci_low is not None and report.ci_high is not None:
        rate += f" (95% CI {report.ci_low:.3f}–{report.ci_high:.3f})"
    bias = "".join(
        f"<tr><td>{_e(judge)}</td><td>{share:.0%}</td></tr>"
        for judge, share in report.position_bias.items()
    )
    against = "".join(
        f"<tr><td>{_e(item.id)}</td><td>{_e(item.preferred)}</td><td>{_e(item.metric)}</td>"
        f"<td>{item.baseline_score:.2f}</td><td>{item.candidate_score:.2f}</td></tr>"
        for item in report.disagreements
    )
    unjudged = (
        f"<p>Not judged: {report.errors} every judge failed on, {report.not_run} a limit "
        f"stopped, {report.unpaired} unpaired, {report.no_response} without a response.</p>"
    )
    return (
        "<h2>Judged preference (both orders)</h2>"
        f"<p>{report.judged} pairs judged: the candidate wins {report.candidate_wins}, "
        f"loses {report.candidate_losses}, ties {report.ties}. Win rate {_e(rate)}.</p>"
        f"{unjudged}<h3>Position-biased pairs per judge</h3>"
        f"<table><tr><th>judge</th><th>share</th></tr>{bias}</table>"
        "<h3>Preference against the scores</h3>"
        + (
            "<table><tr><th>id</th><th>preferred</th><th>metric</th><th>baseline</th>"
            f"<th>candidate</th></tr>{against}</table>"
            if against
            else "<p>none</p>"
        )
    )


def render_compare_html(
    result: Comparison, *, baseline: str, candidate: str, pairwise: PairwiseReport | None = None
) -> str:
    head = "".join(f"<th>{name}</th>" for name in COMPARISON_COLUMNS)
    rows = "".join(_diff_row(key, m) for key, m in result.metrics.items())
    samples = "".join(
        f'<div class="sample regressed"><h3>{_e(key)} · {_e(item.id)}: '
        f"{item.baseline_score:.2f} → {item.candidate_score:.2f} "
        f'<span class="down">({item.diff:+.2f})</span></h3>'
        f'<p class="why">{_e(item.user_input or "")}</p><div class="pair">'
        f"<div><b>baseline</b>\n{_e(item.baseline_response or '')}\n\n"
        f"<i>{_e(item.baseline_reason)}</i></div>"
        f"<div><b>candidate</b>\n{_e(item.candidate_response or '')}\n\n"
        f"<i>{_e(item.candidate_reason)}</i></div></div></div>"
        for key, m in result.metrics.items()
        for item in m.most_regressed
    )
    unpaired = (
        f"<p>Unpaired: {len(result.only_baseline)} only in the baseline, "
        f"{len(result.only_candidate)} only in the candidate.</p>"
    )
    body = (
        "<h1>answer-metrics compare</h1>"
        f'<p class="meta">baseline {_e(baseline)} · candidate {_e(candidate)} · '
        f"{_e(time.strftime('%Y-%m-%d %H:%M'))}</p>"
        f"<table><tr>{head}</tr>{rows}</table>{unpaired}"
        f"<h2>Most regressed samples</h2>{samples or '<p>none</p>'}"
        + (_pairwise_html(pairwise) if pairwise is not None else "")
    )
    return _page(f"answer-metrics compare · {candidate} vs {baseline}", body)
