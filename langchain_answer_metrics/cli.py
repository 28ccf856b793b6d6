"""The ``answer-metrics`` command: score a dataset file, print a table, gate CI.

    answer-metrics demo                                   # offline, bundled en/ru/zh data
    answer-metrics evaluate qa.jsonl --metric semantic_similarity --report report.html
    answer-metrics evaluate qa.csv --metric factual_correctness --metric faithfulness \\
        --base-url http://localhost:11434/v1 --model qwen2.5:7b --out results.jsonl \\
        --fail-under 0.7

This face is thin: it parses arguments, builds the metrics, hands the samples to
:func:`langchain_answer_metrics.runner.stream_evaluate` and prints. Scores come from the
metrics, statistics from :mod:`langchain_answer_metrics.summary`.

Exit codes: 0 success; 1 a metric's mean is below ``--fail-under``; 2 bad arguments,
unreadable data or no usable model (with a one-line error saying what to fix);
130 interrupted (what was written to ``--out`` is kept; rerun to resume).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, TextIO

from langchain_answer_metrics.config import ConfigError, Panel, load_config, panel_from_base_url
from langchain_answer_metrics.datasets import (
    FORMATS,
    ColumnMapping,
    DatasetError,
    DatasetRow,
    demo_path,
    load_rows,
)
from langchain_answer_metrics.judges import Embedder, Judge, as_embedders
from langchain_answer_metrics.metrics import (
    ASPECTS,
    AnswerCorrectness,
    AnswerMetric,
    AspectCritic,
    FactualCorrectness,
    Faithfulness,
    SemanticSimilarity,
)
from langchain_answer_metrics.report import (
    MetricOverview,
    SampleRecord,
    overview,
    read_records,
    record_line,
    render_html,
    sample_record,
)
from langchain_answer_metrics.runner import Progress, stream_evaluate
from langchain_answer_metrics.sample import SampleField

EXIT_OK, EXIT_GATE, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130

METRIC_NAMES = (
    "semantic_similarity",
    "factual_correctness",
    "answer_correctness",
    "faithfulness",
    "aspect_critic",
)
JUDGED = frozenset({"factual_correctness", "answer_correctness", "faithfulness", "aspect_critic"})
EMBEDDED = frozenset({"semantic_similarity", "answer_correctness"})
REQUIRED: dict[str, tuple[SampleField, ...]] = {
    "semantic_similarity": SemanticSimilarity.required_fields,
    "factual_correctness": FactualCorrectness.required_fields,
    "answer_correctness": AnswerCorrectness.required_fields,
    "faithfulness": Faithfulness.required_fields,
    "aspect_critic": AspectCritic.required_fields,
}

NO_JUDGE = (
    "{metrics} need(s) a judge model and none is configured: set OPENAI_API_KEY, or pass "
    "--config models.yaml, or --base-url URL --model NAME for any OpenAI-compatible endpoint "
    "(a local Ollama: --base-url http://localhost:11434/v1 --model qwen2.5:7b; vLLM works too)"
)


DEMO_NEXT = """
Semantic similarity measures meaning and wording, not truth: a wrong date or place can
still score "good". The LLM-judged metrics check each claim; they need a judge:
  answer-metrics demo --metric factual_correctness,faithfulness --base-url URL --model ID
  (or set OPENAI_API_KEY, or pass --config models.yaml)
Your own data: answer-metrics evaluate qa.jsonl --metric semantic_similarity --report report.html"""


class UsageError(Exception):
    """Bad arguments or an unusable setup; the message says what to fix (exit code 2)."""


# --------------------------------------------------------------------------- arguments


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error instead of the usage block."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _unit_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} must be between 0 and 1")
    return value


def _per_metric(text: str) -> tuple[str | None, float]:
    """``0.7`` (every metric) or ``faithfulness=0.8`` (one metric)."""
    name, sep, value = text.rpartition("=")
    return (name.strip() if sep else None), _unit_float(value.strip())


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} must be at least 1")
    return value


def _strictness(text: str) -> int:
    value = _positive_int(text)
    if value > 5:
        raise argparse.ArgumentTypeError(f"{text} must be between 1 and 5")
    return value


def _baseline(text: str) -> float | None:
    if text.lower() == "none":
        return None
    value = _unit_float(text)
    if value >= 1.0:
        raise argparse.ArgumentTypeError("the baseline must be below 1")
    return value


def _add_run_options(parser: argparse.ArgumentParser) -> None:
    metrics = parser.add_argument_group("metrics")
    metrics.add_argument(
        "--metric", action="append", default=[], metavar="NAME",
        help=f"repeatable or comma-separated: {', '.join(METRIC_NAMES)}",
    )  # fmt: skip
    metrics.add_argument(
        "--criterion", metavar="TEXT",
        help=f"aspect_critic's criterion, or one of: {', '.join(ASPECTS)}",
    )  # fmt: skip
    metrics.add_argument("--aspect-name", metavar="NAME", help="aspect_critic's result key")
    metrics.add_argument(
        "--strictness", type=_strictness, default=1, metavar="N",
        help="aspect_critic votes per judge (1-5; use a temperature above 0)",
    )  # fmt: skip
    metrics.add_argument(
        "--threshold", action="append", type=_per_metric, default=[], metavar="[METRIC=]X",
        help="pass mark for the pass rate (repeatable, e.g. 0.7 or faithfulness=0.8)",
    )  # fmt: skip
    metrics.add_argument(
        "--rescale-baseline", type=_baseline, metavar="B|none", default=argparse.SUPPRESS,
        help="semantic similarity baseline b in max(0, (cos - b) / (1 - b)); defaults to "
        "the local model's measured baseline, none for other embedding models",
    )  # fmt: skip

    models = parser.add_argument_group("models (LLM-judged metrics)")
    models.add_argument("--config", type=Path, metavar="FILE", help="models YAML file")
    models.add_argument(
        "--base-url", metavar="URL", help="any OpenAI-compatible endpoint (Ollama, vLLM ...)"
    )
    models.add_argument("--model", metavar="ID", help="judge model id (with --base-url or env)")
    models.add_argument(
        "--embedding-model", metavar="ID",
        help="remote embedding model instead of the bundled local one",
    )  # fmt: skip
    models.add_argument(
        "--max-concurrency", type=_positive_int, default=16, metavar="N",
        help="model requests in flight (default 16)",
    )  # fmt: skip

    output = parser.add_argument_group("output")
    output.add_argument("--out", type=Path, metavar="FILE", help="per-sample JSONL; resumes")
    output.add_argument("--report", type=Path, metavar="FILE", help="self-contained HTML report")
    output.add_argument(
        "--fail-under", action="append", type=_per_metric, default=[], metavar="[METRIC=]X",
        help="exit 1 when a metric's mean is below X (repeatable, e.g. faithfulness=0.8)",
    )  # fmt: skip
    output.add_argument("--quiet", action="store_true", help="no progress bar")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="answer-metrics",
        description="Score answers in a dataset file with LLM-judged and embedding metrics.",
        epilog="Exit codes: 0 ok, 1 below --fail-under, 2 bad arguments or data, 130 interrupted.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    evaluate = commands.add_parser(
        "evaluate", help="score a JSONL, JSON or CSV file",
        description="Score every sample of DATA; prints a summary table per metric.",
    )  # fmt: skip
    evaluate.add_argument("data", type=Path, metavar="DATA", help=".jsonl, .json or .csv file")
    evaluate.add_argument("--format", choices=FORMATS, help="override the format from the suffix")
    columns = evaluate.add_argument_group("column mapping (each flag overrides the default names)")
    for flag, help_text in (
        ("--user-input-col", "column with the question (default: user_input/question/...)"),
        ("--response-col", "column with the answer to score (default: response/answer/...)"),
        ("--reference-col", "column with the reference (default: reference/ground_truth/...)"),
        ("--contexts-col", "column with the contexts; in CSV a JSON list or one text"),
        ("--id-col", "column with the sample id (default: id, else the row number)"),
    ):
        columns.add_argument(flag, metavar="NAME", help=help_text)
    _add_run_options(evaluate)

    demo = commands.add_parser(
        "demo", help="score the bundled en/ru/zh dataset offline",
        description="Score the bundled multilingual demo dataset. Runs offline with the "
        "local embedding model; add LLM metrics with a judge (--config / --base-url).",
    )  # fmt: skip
    _add_run_options(demo)
    return parser


# --------------------------------------------------------------------------- models


@dataclass
class MetricPlan:
    """A metric to run and the fingerprint of its settings (for resuming)."""

    metric: AnswerMetric
    signature: str


def _chosen_metrics(values: Sequence[str], default: Sequence[str]) -> list[str]:
    names = [name.strip() for value in values for name in value.split(",") if name.strip()]
    unknown = [name for name in names if name not in METRIC_NAMES]
    if unknown:
        raise UsageError(f"unknown metric {unknown[0]!r}; choose from {', '.join(METRIC_NAMES)}")
    names = list(dict.fromkeys(names)) or list(default)
    if not names:
        raise UsageError(f"choose at least one --metric: {', '.join(METRIC_NAMES)}")
    return names


def _judge_panel(args: argparse.Namespace, names: Sequence[str]) -> Panel | None:
    """The configured panel, or None when nothing is configured (no config, URL or key)."""
    if args.config is not None:
        if args.base_url or args.model or args.embedding_model:
            raise UsageError(
                "--config already lists the models; drop --base-url/--model/--embedding-model "
                "or drop --config"
            )
        return load_config(args.config)
    if args.base_url is not None:
        if args.model is None and JUDGED & set(names):
            raise UsageError("--base-url needs --model ID: the judge's model id on that endpoint")
        # Embedding-only runs never call the judge, but the panel is built with one.
        return panel_from_base_url(
            args.base_url,
            model=args.model or "unused",
            embedding_model=args.embedding_model,
        )
    if os.environ.get("OPENAI_API_KEY"):
        overrides = {
            "ANSWER_METRICS_JUDGE_MODEL": args.model,
            "ANSWER_METRICS_EMBEDDING_MODEL": args.embedding_model,
        }
        env = {**os.environ, **{k: v for k, v in overrides.items() if v}}
        return load_config(env=env)
    if args.embedding_model:
        raise UsageError(
            "--embedding-model needs an endpoint: set OPENAI_API_KEY, or pass --base-url URL"
        )
    return None


def _embeddings(
    args: argparse.Namespace, panel: Panel | None
) -> tuple[list[Embedder], float | None]:
    """Configured embedding models, else the bundled local model with its baseline."""
    configured = args.config is not None or args.embedding_model is not None
    if panel is not None and configured and panel.embedders:
        return list(panel.embedders), getattr(args, "rescale_baseline", None)
    try:
        from langchain_answer_metrics.local_embeddings import LOCAL_BASELINE, LocalE5Embeddings

        local = LocalE5Embeddings()
    except ImportError as error:
        raise UsageError(
            f"the local embedding model is not installed ({error}); run "
            'pip install "langchain-answer-metrics[local]" (x86_64 Linux), or use remote '
            "embeddings with --embedding-model ID or a --config listing embedding_models"
        ) from None
    # Absent unless given (default=SUPPRESS): "none" is a choice, distinct from the default.
    baseline = getattr(args, "rescale_baseline", LOCAL_BASELINE)
    return as_embedders(local), baseline


def _signature(name: str, settings: Mapping[str, Any]) -> str:
    payload = json.dumps({"metric": name, **settings}, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def build_metrics(args: argparse.Namespace, names: Sequence[str]) -> list[MetricPlan]:
    """The metric objects for ``names``, built from the command's model options."""
    if "aspect_critic" in names and not (args.criterion or "").strip():
        raise UsageError(
            'aspect_critic needs --criterion TEXT (e.g. --criterion "The answer cites a '
            f'year"), or a named aspect: {", ".join(ASPECTS)}'
        )
    explicit = args.config or args.base_url or args.embedding_model
    # Only a run that needs a judge (or names models) reads the config or the environment:
    # semantic similarity alone is offline whatever OPENAI_* variables are set.
    panel = _judge_panel(args, names) if explicit or JUDGED & set(names) else None
    judges: list[Judge] = list(panel.judges) if panel is not None else []
    judged = [name for name in names if name in JUDGED]
    if judged and not judges:
        if panel is None:
            raise UsageError(NO_JUDGE.format(metrics=", ".join(judged)))
        raise UsageError(f"{args.config}: lists no chat_models, but {judged[0]} needs a judge")
    embedders: list[Embedder] = []
    baseline: float | None = None
    if EMBEDDED & set(names):
        embedders, baseline = _embeddings(args, panel)
    models = {
        "judges": [judge.label for judge in judges],
        "embedders": [embedder.label for embedder in embedders],
    }
    plans = []
    for name in names:
        metric: AnswerMetric
        settings: dict[str, Any] = {}
        if name == "semantic_similarity":
            metric = SemanticSimilarity(embeddings=embedders, rescale_baseline=baseline)
            settings = {"embedders": models["embedders"], "baseline": baseline}
        elif name == "answer_correctness":
            metric = AnswerCorrectness(llm=judges, embeddings=embedders, rescale_baseline=baseline)
            settings = {**models, "baseline": baseline}
        elif name == "aspect_critic":
            criterion = ASPECTS.get(args.criterion, args.criterion)
            metric = AspectCritic(
                llm=judges,
                criterion=criterion,
                name=_metric_key(name, args),
                strictness=args.strictness,
            )
            settings = {"judges": models["judges"], "criterion": criterion,
                        "strictness": metric.strictness}  # fmt: skip
        elif name == "factual_correctness":
            metric = FactualCorrectness(llm=judges)
            settings = {"judges": models["judges"]}
        else:
            metric = Faithfulness(llm=judges)
            settings = {"judges": models["judges"]}
        plans.append(MetricPlan(metric, _signature(name, settings)))
    return plans


def _per_metric_values(
    values: Sequence[tuple[str | None, float]], keys: Sequence[str], flag: str
) -> dict[str, float]:
    """``--threshold 0.7 --threshold faithfulness=0.8`` -> a value per metric key.

    A value for one metric wins over a value for all; among equals, the last one wins.
    """
    result: dict[str, float] = {}
    for name, value in values:
        if name is None:
            result.update(dict.fromkeys(keys, value))
        elif name not in keys:
            raise UsageError(
                f"{flag} {name}={value}: {name!r} is not a chosen metric ({', '.join(keys)})"
            )
    result.update({name: value for name, value in values if name is not None})
    return result


# --------------------------------------------------------------------------- progress


class ProgressBar:
    """Samples done, errors and rate on stderr; redrawn in place on a terminal, else
    printed every 10% so CI logs stay short."""

    def __init__(self, total: int, stream: TextIO = sys.stderr, *, enabled: bool = True) -> None:
        self.total = total
        self.stream = stream
        self.enabled = enabled and total > 0
        self.interactive = stream.isatty()
        self._last_step = -1
        self._width = 0

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
            if step == self._last_step and progress.done < self.total:
                return
            self._last_step = step
            self.stream.write(line + "\n")
        self.stream.flush()

    def render(self, progress: Progress) -> str:
        width = 24
        filled = width * progress.done // self.total
        bar = "#" * filled + "." * (width - filled)
        return (
            f"scoring [{bar}] {progress.done}/{self.total} samples · "
            f"{progress.errors} with errors · {progress.rate:.1f}/s"
        )

    def close(self) -> None:
        if self.enabled and self.interactive:
            self.stream.write("\n")
            self.stream.flush()


# --------------------------------------------------------------------------- the run


def _check_writable(path: Path | None, flag: str) -> None:
    if path is not None and not path.expanduser().resolve().parent.is_dir():
        raise UsageError(f"{flag} {path}: the folder {path.parent} does not exist; create it")


def _open_out(path: Path) -> TextIO:
    try:
        ends_cleanly = path.stat().st_size == 0 or path.read_bytes().endswith(b"\n")
    except FileNotFoundError:
        ends_cleanly = True
    try:
        file = path.open("a", encoding="utf-8")
    except OSError as error:
        raise UsageError(f"--out {path}: cannot write it ({error.strerror})") from None
    if not ends_cleanly:
        file.write("\n")  # a line cut short by a killed run must not swallow the next one
    return file


def _previous_results(out: Path | None, data: Path) -> dict[str, SampleRecord]:
    """The records already in ``--out``, refusing a file that is not a results file."""
    if out is None:
        return {}
    if out.exists() and data.exists() and out.resolve() == data.resolve():
        raise UsageError(f"--out {out} is the data file; write the results to another file")
    previous, unreadable = read_records(out)
    # One unreadable line is a run killed mid-write; more, and nothing else, is some other
    # file that appending results would spoil.
    if unreadable > 1 and not previous:
        raise UsageError(
            f"--out {out}: holds no answer-metrics results ({unreadable} other lines); "
            "choose a new file, or delete it to start over"
        )
    if unreadable:
        print(f"{out}: ignored {unreadable} unreadable line(s)", file=sys.stderr)
    return previous


def _metric_key(name: str, args: argparse.Namespace) -> str:
    """The result key of ``name``: an AspectCritic is keyed by its name."""
    if name != "aspect_critic":
        return name
    return args.aspect_name or (args.criterion if args.criterion in ASPECTS else name)


def _saved(previous: Mapping[str, SampleRecord], row: DatasetRow) -> SampleRecord | None:
    """The saved record of ``row``, unless the row's text changed since."""
    known = previous.get(row.id)
    return known if known is not None and known.fingerprint == row.fingerprint else None


def _plan_resume(
    rows: Sequence[DatasetRow],
    previous: Mapping[str, SampleRecord],
    signatures: Mapping[str, str],
) -> dict[tuple[str, ...], list[DatasetRow]]:
    """The rows still to score, grouped by the metrics each one lacks.

    A resumed row with one metric already scored is not scored again for it. Usually
    there is a single group: every metric for the rows not yet in ``--out``.
    """
    groups: dict[tuple[str, ...], list[DatasetRow]] = {}
    for row in rows:
        known = _saved(previous, row)
        missing = tuple(
            key for key in signatures if known is None or not known.scored(key, signatures[key])
        )
        if missing:
            groups.setdefault(missing, []).append(row)
    return groups


def _interrupted(error: BaseException) -> bool:
    """Ctrl-C, also when it surfaces as the error of closing the interrupted stream."""
    return isinstance(error, KeyboardInterrupt) or isinstance(error.__context__, KeyboardInterrupt)


def _score(
    groups: Mapping[tuple[str, ...], Sequence[DatasetRow]],
    plans: Sequence[MetricPlan],
    previous: Mapping[str, SampleRecord],
    records: dict[str, SampleRecord],
    out: TextIO | None,
    args: argparse.Namespace,
) -> int:
    """Stream every group through the runner, saving each row as it arrives.

    Returns how many rows were scored; raises KeyboardInterrupt on Ctrl-C after the rows
    scored so far are saved.
    """
    signatures = {plan.metric.key: plan.signature for plan in plans}
    bar = ProgressBar(sum(map(len, groups.values())), enabled=not args.quiet)
    written = 0
    try:
        for missing, rows in groups.items():
            offset = written

            def progress(state: Progress, offset: int = offset) -> None:
                bar(state.model_copy(update={"done": state.done + offset}))

            stream = stream_evaluate(
                [row.sample for row in rows],
                [plan.metric for plan in plans if plan.metric.key in missing],
                max_concurrency=args.max_concurrency,
                on_progress=progress,
            )
            for result in stream:
                row = rows[result.index]
                record = sample_record(row, result.results, signatures, _saved(previous, row))
                records[row.id] = record
                if out is not None:
                    out.write(record_line(record))
                    out.flush()  # written as it arrives, so Ctrl-C loses nothing scored
                written += 1
    except (KeyboardInterrupt, RuntimeError) as error:
        if not _interrupted(error):
            raise
        raise KeyboardInterrupt(written) from None
    finally:
        bar.close()
    return written


def run(args: argparse.Namespace, data: Path, *, title: str, default_metrics: Sequence[str]) -> int:
    """Score ``data``: check, plan the resume, stream, write, summarise, gate."""
    names = _chosen_metrics(args.metric, default_metrics)
    keys = [_metric_key(name, args) for name in names]
    thresholds = _per_metric_values(args.threshold, keys, "--threshold")
    gates = _per_metric_values(args.fail_under, keys, "--fail-under")
    _check_writable(args.out, "--out")
    _check_writable(args.report, "--report")
    mapping = ColumnMapping(
        user_input=getattr(args, "user_input_col", None),
        response=getattr(args, "response_col", None),
        reference=getattr(args, "reference_col", None),
        retrieved_contexts=getattr(args, "contexts_col", None),
        id=getattr(args, "id_col", None) or "id",
    )
    required = list(dict.fromkeys(field for name in names for field in REQUIRED[name]))
    rows = load_rows(data, mapping, format=getattr(args, "format", None), required=required)
    plans = build_metrics(args, names)

    previous = _previous_results(args.out, data)
    groups = _plan_resume(rows, previous, {plan.metric.key: plan.signature for plan in plans})
    pending = sum(map(len, groups.values()))
    print(f"{title}: {len(rows)} samples, metrics: {', '.join(keys)}", file=sys.stderr)
    if pending < len(rows):
        print(
            f"resuming: {len(rows) - pending} samples already scored in {args.out}",
            file=sys.stderr,
        )

    records = dict(previous)
    out = _open_out(args.out) if args.out is not None and pending else None
    try:
        _score(groups, plans, previous, records, out, args)
    except KeyboardInterrupt as stop:
        written = stop.args[0] if stop.args else 0
        saved = (
            f"{written} newly scored samples are saved in {args.out}; rerun the same "
            "command to resume"
            if args.out is not None
            else "nothing was saved (pass --out FILE to keep results and resume)"
        )
        print(f"\ninterrupted: {saved}", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        if out is not None:
            out.close()

    final = [records[row.id] for row in rows if row.id in records]
    overviews = overview(final, keys, thresholds)
    print_summary(overviews, final, gates, every_sample=args.command == "demo")
    if args.report is not None:
        _write_report(args.report, final, overviews, data, gates)
    if args.out is not None:
        print(f"per-sample results: {args.out}", file=sys.stderr)
    return _gate(overviews, gates)


def _write_report(
    path: Path,
    records: Sequence[SampleRecord],
    overviews: Sequence[MetricOverview],
    data: Path,
    gates: Mapping[str, float],
) -> None:
    models = sorted(
        {model for record in records for entry in record.metrics.values()
         for model in entry.per_model}
    )  # fmt: skip
    page = render_html(
        records, overviews, source=str(data), models=models, fail_under=gates,
        generated=time.strftime("%Y-%m-%d %H:%M"),
    )  # fmt: skip
    try:
        path.write_text(page, encoding="utf-8")
    except OSError as error:
        raise UsageError(f"--report {path}: cannot write it ({error.strerror})") from None
    print(f"report: {path}", file=sys.stderr)


# --------------------------------------------------------------------------- printing


def _fmt(value: float | None, pattern: str = "{:.3f}") -> str:
    return "-" if value is None else pattern.format(value)


def _columns(table: Sequence[Sequence[str]], stream: TextIO) -> None:
    """Print rows as aligned columns, with a rule under the header row."""
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    for number, row in enumerate(table):
        line = "  ".join(cell.ljust(width) for cell, width in zip(row, widths))
        print(line.rstrip(), file=stream)
        if number == 0:
            print("  ".join("-" * width for width in widths), file=stream)


def print_summary(
    overviews: Sequence[MetricOverview],
    records: Sequence[SampleRecord],
    gates: Mapping[str, float],
    *,
    every_sample: bool = False,
    stream: TextIO = sys.stdout,
) -> None:
    """The per-metric table and means per model; then every sample's scores (demo) or
    the lowest-scoring samples; then the first error of each metric and the gates."""
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
        if item.per_model:
            means = ", ".join(f"{model} {_fmt(mean)}" for model, mean in item.per_model.items())
            print(f"  {item.summary.key} by model: {means}", file=stream)
    keys = [item.summary.key for item in overviews]
    if every_sample:
        print("", file=stream)
        _columns(
            [("sample", *keys)]
            + [(r.id, *(_sample_score(r, key) for key in keys)) for r in records],
            stream,
        )
    else:
        _print_lowest(records, keys, stream)
    _print_errors(records, keys, stream)
    if gates:
        print("", file=stream)
    for key, limit in gates.items():
        summary = next(item.summary for item in overviews if item.summary.key == key)
        verdict = "ok" if summary.mean is not None and summary.mean >= limit else "FAIL"
        print(
            f"--fail-under {key}: mean {_fmt(summary.mean)} vs {limit:.3f}: {verdict}",
            file=stream,
        )


def _sample_score(record: SampleRecord, key: str) -> str:
    entry = record.metrics.get(key)
    if entry is None:
        return "-"
    if entry.error is not None:
        return "error"
    return f"{_fmt(entry.score)} {entry.band}"


def _print_lowest(records: Sequence[SampleRecord], keys: Sequence[str], stream: TextIO) -> None:
    if len(records) <= 3:
        return
    for key in keys:
        scored = [(r.metrics[key].score, r.id, r) for r in records if key in r.metrics]
        lowest = sorted((score, i, r) for score, i, r in scored if score is not None)[:3]
        if lowest:
            print(f"\nlowest {key}:", file=stream)
        for score, row_id, record in lowest:
            reason = " ".join(record.metrics[key].reason.split())
            print(f"  {row_id}  {score:.3f}  {reason[:110]}", file=stream)


def _print_errors(records: Sequence[SampleRecord], keys: Sequence[str], stream: TextIO) -> None:
    for key in keys:
        failed = [
            (r.id, error) for r in records
            if key in r.metrics and (error := r.metrics[key].error) is not None
        ]  # fmt: skip
        if failed:
            row_id, error = failed[0]
            print(
                f"\n{key}: {len(failed)} error(s), first on {row_id}: "
                f"{error.type}: {error.message}",
                file=stream,
            )


def _gate(overviews: Sequence[MetricOverview], gates: Mapping[str, float]) -> int:
    failed = [
        item.summary.key
        for item in overviews
        if item.summary.key in gates
        and (item.summary.mean is None or item.summary.mean < gates[item.summary.key])
    ]
    if failed:
        print(f"answer-metrics: below --fail-under: {', '.join(failed)}", file=sys.stderr)
        return EXIT_GATE
    return EXIT_OK


# --------------------------------------------------------------------------- entry point


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point: ``answer-metrics``."""
    for stream in (sys.stdout, sys.stderr):
        # Dataset text may be Chinese or Russian; never crash on a narrow console encoding.
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="replace")
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        if args.command == "demo":
            code = run(args, demo_path(), title="demo", default_metrics=["semantic_similarity"])
            if code == EXIT_OK and not args.metric:
                print(DEMO_NEXT, file=sys.stderr)
            return code
        return run(args, args.data, title=str(args.data), default_metrics=[])
    except (UsageError, DatasetError, ConfigError) as error:
        message = str(error)
        print(f"answer-metrics: error: {message}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
