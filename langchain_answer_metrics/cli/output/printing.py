"""What the ``answer-metrics`` command prints: the progress bar while scoring, then the
summary table, the lowest-scoring samples, the first error of each metric and the gates.

Scores and statistics arrive computed (:mod:`langchain_answer_metrics.cli.records`); this
module only lays them out. Every text that comes from the data, a judge or an error goes
through :func:`for_terminal` before it is printed.
"""

from __future__ import annotations

import heapq
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TextIO

from langchain_answer_metrics.cli.output.terminal import for_terminal as for_terminal
from langchain_answer_metrics.cli.records import ClaimRecord, MetricOverview, SampleRecord
from langchain_answer_metrics.metrics.explain import counted
from langchain_answer_metrics.run.runner import Progress

# Characters a terminal acts on instead of showing: C0 and C1 controls (ESC starts colour,
# title and cursor sequences; CSI is U+009B), DEL, the bidi embeddings, overrides and
# isolates that reorder what follows, and lone surrogates (not text at all).
# --------------------------------------------------------------------------- progress


class ProgressBar:
    """Samples done, requests done and in flight, errors and ETA on stderr; redrawn in
    place on a terminal, else printed every 10% and at least every
    :attr:`quiet_seconds` (so a CI log shows a long run moving)."""

    quiet_seconds = 10.0

    def __init__(
        self,
        total: int,
        stream: TextIO | None = None,
        *,
        enabled: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total = total
        self.stream = stream or sys.stderr
        self.enabled = enabled and total > 0
        self.interactive = self.stream.isatty()
        self._last_step = -1
        self._width = 0
        self._clock = clock
        self._last_line = self._started = clock()

    def __call__(self, progress: Progress) -> None:
        if not self.enabled:
            return
        line = self.render(progress)
        if self.interactive:
            # Pad to the longest line so far: a shorter line (the rate lost a digit) must
            # not leave the end of the previous one on screen.
            self._width = max(self._width, len(line))
            self.stream.write("\r" + line.ljust(self._width))
        else:
            step = progress.done * 10 // self.total
            now = self._clock()
            quiet_for = now - self._last_line
            if (
                step == self._last_step
                and progress.done < self.total
                and (quiet_for < self.quiet_seconds)
            ):
                return
            self._last_step, self._last_line = step, now
            self.stream.write(line + "\n")
        self.stream.flush()

    def render(self, progress: Progress) -> str:
        width = 24
        filled = width * progress.done // self.total
        bar = "#" * filled + "." * (width - filled)
        eta = progress.eta
        if progress.total is None and progress.done:
            # The command streams the rows to the runner, whose progress then knows no
            # total: the bar's own total and clock (across resume groups) give the ETA.
            elapsed = self._clock() - self._started
            eta = (self.total - progress.done) * elapsed / progress.done
        return (
            f"scoring [{bar}] {progress.done}/{counted(self.total, 'sample')} · requests "
            f"{progress.requests_done} done, {progress.requests_in_flight} in flight · "
            f"{progress.errors} with errors · "
            + (f"ETA {_duration(eta)}" if eta is not None else "ETA -")
        )

    def close(self) -> None:
        if self.enabled and self.interactive:
            self.stream.write("\n")
            self.stream.flush()


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


# --------------------------------------------------------------------------- printing


def _fmt(value: float | None, pattern: str = "{:.3f}") -> str:
    return "-" if value is None else pattern.format(value)


def _columns(table: Sequence[Sequence[str]], stream: TextIO) -> None:
    """Print rows as aligned columns, with a rule under the header row."""
    shown = [[for_terminal(cell) for cell in row] for row in table]
    widths = [max(len(row[i]) for row in shown) for i in range(len(shown[0]))]
    for number, row in enumerate(shown):
        line = "  ".join(cell.ljust(width) for cell, width in zip(row, widths))
        print(line.rstrip(), file=stream)
        if number == 0:
            print("  ".join("-" * width for width in widths), file=stream)


def print_summary(
    overviews: Sequence[MetricOverview],
    records: Iterable[SampleRecord],
    gates: Mapping[str, float],
    *,
    every_sample: bool = False,
    stream: TextIO | None = None,
) -> None:
    """The per-metric table and means per model; then every sample's scores (demo) or
    the lowest-scoring samples; then the first error of each metric and the gates.
    ``stream``: standard output as it is when called (a test may have replaced it)."""
    stream = stream or sys.stdout
    table = [("metric", "mean", "95% CI", "pass rate", "errors", "scored")]
    for item in overviews:
        s = item.summary
        ci = f"{s.ci_low:.3f}-{s.ci_high:.3f}" if s.ci_low is not None else "-"
        pass_rate = "-"
        if s.pass_rate is not None and s.threshold is not None:
            pass_rate = f"{s.pass_rate:.0%} (>={s.threshold:.2f})"
        table.append((s.key, _fmt(s.mean), ci, pass_rate, str(s.error_count), str(s.scored)))
    _columns(table, stream)
    for item in overviews:
        if apart := _counted_apart(item):
            print(for_terminal(f"  {item.summary.key}: {apart}"), file=stream)
        if item.per_model:
            means = ", ".join(f"{model} {_fmt(mean)}" for model, mean in item.per_model.items())
            print(for_terminal(f"  {item.summary.key} by model: {means}"), file=stream)
    keys = [item.summary.key for item in overviews]
    seen = _Seen(keys, every_sample=every_sample)
    for record in records:  # read once: a long run's records come from its --out file
        seen.add(record)
    if every_sample:
        print("", file=stream)
        _columns([("sample", *keys), *seen.rows], stream)
        _print_claims(seen.claims, stream)
    elif seen.count > 3:
        _print_lowest(seen.lowest, stream)
    _print_errors(seen.errors, stream)
    if gates:
        print("", file=stream)
    for key, limit in gates.items():
        summary = next(item.summary for item in overviews if item.summary.key == key)
        verdict = "ok" if summary.mean is not None and summary.mean >= limit else "FAIL"
        line = f"--fail-under {key}: mean {_fmt(summary.mean)} vs {limit:.3f}: {verdict}"
        print(for_terminal(line), file=stream)


def _counted_apart(item: MetricOverview) -> str:
    """The samples the table's statistics leave out or flag: not applicable (no score,
    no error) and those whose response made no claim (abstentions)."""
    s, parts = item.summary, []
    if s.not_applicable:
        parts.append(f"{s.not_applicable} not applicable, left out of the mean")
    if s.no_claims:
        parts.append(f"{counted(s.no_claims, 'response')} with no claims (abstentions)")
    return "; ".join(parts)


def _sample_score(record: SampleRecord, key: str) -> str:
    entry = record.metrics.get(key)
    if entry is None:
        return "-"
    if entry.error is not None:
        return "error"
    if entry.not_applicable is not None:
        return f"n/a ({entry.not_applicable.replace('_', ' ')})"
    return f"{_fmt(entry.score)} {entry.band}"


class _Seen:
    """What the summary prints of the records, gathered in one pass: the three lowest
    scores and the errors of each metric (and each row's scores, for ``every_sample``)."""

    def __init__(self, keys: Sequence[str], *, every_sample: bool) -> None:
        self.keys, self.every_sample, self.count = keys, every_sample, 0
        self.rows: list[tuple[str, ...]] = []
        self.claims: list[tuple[str, list[tuple[str, ClaimRecord]]]] = []
        self.lowest: dict[str, list[tuple[float, str, str]]] = {key: [] for key in keys}
        self.errors: dict[str, list[Any]] = {key: [0, None] for key in keys}

    def add(self, record: SampleRecord) -> None:
        self.count += 1
        if self.every_sample:
            self.rows.append((record.id, *(_sample_score(record, key) for key in self.keys)))
            claims = [(key, claim) for key in self.keys for claim in _claims_of(record, key)]
            if claims:
                self.claims.append((record.id, claims))
        for key in self.keys:
            entry = record.metrics.get(key)
            if entry is None:
                continue
            if entry.error is not None:
                self.errors[key][0] += 1
                if self.errors[key][1] is None:
                    self.errors[key][1] = (record.id, entry.error)
            if entry.score is not None and entry.score < 1.0:
                # The three smallest (score, id) below a perfect score, which is never
                # "low": a bounded heap, not a sort of every row.
                item = (-entry.score, _Reversed(record.id), entry.reason)
                heap = self.lowest[key]
                if len(heap) < 3:
                    heapq.heappush(heap, item)
                elif item > heap[0]:
                    heapq.heapreplace(heap, item)


class _Reversed(str):
    """An id that sorts backwards, so a max-heap of ``(-score, id)`` keeps the smallest
    ``(score, id)`` pairs."""

    def __lt__(self, other: str) -> bool:
        return str.__gt__(self, other)

    def __gt__(self, other: str) -> bool:
        return str.__lt__(self, other)


def _claims_of(record: SampleRecord, key: str) -> list[ClaimRecord]:
    entry = record.metrics.get(key)
    return entry.claims if entry is not None else []


def _print_claims(
    claims: Sequence[tuple[str, list[tuple[str, ClaimRecord]]]], stream: TextIO
) -> None:
    """Each sample's claims with their verdicts (the demo): the metric, which text a
    claim comes from, the judge's verdict and, in a panel, the judge."""
    if not claims:
        return
    models = sorted({claim.model for _, found in claims for _, claim in found})
    tables = {
        row_id: [
            (
                key,
                claim.side,
                claim.verdict,
                *([claim.model] if len(models) > 1 else []),
                " ".join(claim.claim.split()),
            )
            for key, claim in found
        ]
        for row_id, found in claims
    }
    rows = [row for table in tables.values() for row in table]
    widths = [max(len(row[n]) for row in rows) for n in range(len(rows[0]) - 1)]
    print(f"\nclaims and their verdicts ({', '.join(models)}):", file=stream)
    for row_id, table in tables.items():
        print(for_terminal(row_id), file=stream)
        for row in table:
            cells = [cell.ljust(width) for cell, width in zip(row, widths)]
            print(for_terminal("  " + "  ".join([*cells, row[-1]])), file=stream)


def _print_lowest(lowest: Mapping[str, list[Any]], stream: TextIO) -> None:
    for key, heap in lowest.items():
        ordered = sorted((-score, str(row_id), reason) for score, row_id, reason in heap)
        if ordered:
            print(f"\nlowest {for_terminal(key)}:", file=stream)
        for score, row_id, reason in ordered:
            reason = " ".join(reason.split())
            line = f"  {for_terminal(row_id)}  {score:.3f}  {for_terminal(reason[:110])}"
            print(line, file=stream)


def _print_errors(errors: Mapping[str, list[Any]], stream: TextIO) -> None:
    shown: dict[str, str] = {}  # each distinct error once: a broken judge fails every metric
    for key, (count, first) in errors.items():
        if count:
            row_id, error = first
            line = f"{key}: {counted(count, 'error')}, first on {row_id}: "
            text = f"{error.type}: {error.message.removeprefix(f'{key}: ')}"
            if text in shown:
                line += f"the same error as {shown[text]}"
            else:
                shown[text] = key
                line += f"{error.type}: {error.message}"
            print("\n" + for_terminal(line), file=stream)
