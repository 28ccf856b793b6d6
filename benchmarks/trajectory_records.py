"""What writing a tool-call metric's results costs, before and after they were written
from the compact alignment, and whether every written form is the same byte for byte.

    python benchmarks/trajectory_records.py                       # 2,000 trajectories x 20 calls
    python benchmarks/trajectory_records.py --trajectories 200 --rounds 1 --before HEAD

``TrajectoryMatch`` scores the trajectories of ``benchmarks/agent_trajectories.py`` (OpenAI
chat dicts, 20 calls each, ten perturbations); this times, per trajectory, each way a
result is written (``time.process_time()``, the scoring itself not counted):

- ``--out record``: the CLI's line (``sample_record`` and ``record_line``, no whole result);
- ``checkpoint record``: the library's ``checkpoint=`` line (the whole result kept too);
- ``LangSmith feedback``: the feedback's detail (``feedback_detail``);
- ``DataFrame cell``: a row's result columns (``outcome_cells``, what ``to_pandas`` reads);
- ``report view``: ``details.trajectory_view()``.

"Before" is the package of ``--before REF`` (a git commit; default: main before this
change), exported to a temporary folder; "after" is this working tree. Each round runs one
process per tree (``PYTHONPATH`` set to it), the two alternating which goes first; the
median of the rounds is reported, and the ratio after / before.

Each process also writes every form on a wider set of results: ``TrajectoryMatch`` in its
four modes and ``ToolCallF1``, each with the four argument modes, on generated
trajectories and hand-made ones (arguments not JSON, a tuple, a date, a NaN, non-ASCII
text, no call at all), in each form above and as ``model_dump`` (both modes, and with the
options that leave fields out), ``model_dump_json``, ``repr``, the report's HTML, a reload
from JSON and from a record, and the details' JSON schemas. A digest of each form is
compared between the two trees: the script fails if any differs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

from trees import export_tree

ROOT = Path(__file__).resolve().parent.parent
BEFORE = "91ca6db"  # main before the records were written from the compact alignment
FIXED = {
    "model_dump nested include/exclude": "ignored inside the alignment before; honoured now, "
    "as by the list of models it reads as (and as before the alignment was compact)"
}
"""Forms that differ from ``BEFORE`` on purpose, and why (reported, not a failure)."""
TIMED = ("--out record", "checkpoint record", "LangSmith feedback", "DataFrame cell", "report view")


def writers() -> dict[str, Callable[[Any], Any]]:
    """Each form a result is written in, from the package on ``sys.path`` (either tree)."""
    from langchain_answer_metrics.adapters.langsmith.results import feedback_detail
    from langchain_answer_metrics.run.records.building import sample_record
    from langchain_answer_metrics.run.records.format import record_line
    from langchain_answer_metrics.run.tables import outcome_cells

    def line(result: Any, whole: bool) -> str:
        record = sample_record("id", "fp", {}, {result.key: result}, {result.key: "s"}, whole=whole)
        return record_line(record)

    return {
        "--out record": lambda result: line(result, False),
        "checkpoint record": lambda result: line(result, True),
        "LangSmith feedback": feedback_detail,
        "DataFrame cell": lambda result: outcome_cells(result.key, result),
        "report view": lambda result: result.details.trajectory_view(),
    }


def every_form(result: Any) -> dict[str, str]:
    """Every written form of ``result`` as text (``repr`` keeps python types and order)."""
    from langchain_answer_metrics import MetricResult
    from langchain_answer_metrics.cli.output.trajectory_html import trajectory_html
    from langchain_answer_metrics.run.records.building import restored_result
    from langchain_answer_metrics.run.records.format import SampleRecord

    written = {name: write(result) for name, write in writers().items()}
    forms = {name: repr(value) for name, value in written.items()}
    details = result.details
    view = details.trajectory_view()
    checkpoint = SampleRecord.model_validate_json(written["checkpoint record"])
    flags: list[dict[str, Any]] = [
        {"exclude_none": True},
        {"exclude_defaults": True},
        {"exclude_unset": True},
        {"by_alias": True},
        {"round_trip": True},
    ]
    nested: list[dict[str, Any]] = [
        {"include": {"alignment": {0: {"expected"}}, "extra": True}},
        {"exclude": {"alignment": {"__all__": {"matched"}}}},
    ]
    forms |= {
        "model_dump": repr(result.model_dump()),
        "model_dump json": repr(result.model_dump(mode="json")),
        "model_dump_json": result.model_dump_json(),
        "model_dump_json indent": details.model_dump_json(indent=2),
        "model_dump options": _dumps(details, flags),
        "model_dump nested include/exclude": _dumps(details, nested),
        "repr": repr(result),
        "report html": trajectory_html(view) + view.model_dump_json(),
        "reload": MetricResult.model_validate_json(result.model_dump_json()).model_dump_json(),
        "restored": restored_result(result.key, checkpoint.metrics[result.key]).model_dump_json(),
    }
    return forms


def _dumps(details: Any, options: list[dict[str, Any]]) -> str:
    return repr(
        [
            details.model_dump(mode=mode, **option)
            for mode in ("python", "json")
            for option in options
        ]
    )


def odd_samples() -> list[dict[str, Any]]:
    """Hand-made trajectories: arguments that are not JSON, python values JSON has not."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    def sample(calls: list[tuple[str, Any]], expected: list[dict[str, Any]]) -> dict[str, Any]:
        tool_calls = [
            {"name": name, "args": args, "id": f"c{index}"}
            for index, (name, args) in enumerate(calls)
            if isinstance(args, dict)
        ]
        bad = [
            {"name": name, "args": args, "id": f"c{index}", "error": None}
            for index, (name, args) in enumerate(calls)
            if isinstance(args, str)
        ]
        messages = [
            HumanMessage("go"),
            AIMessage("", tool_calls=tool_calls, invalid_tool_calls=bad),
            *(ToolMessage("ok", tool_call_id=f"c{index}") for index in range(len(calls))),
            AIMessage("done"),
        ]
        return {"messages": messages, "reference_tool_calls": expected}

    odd = {"t": (1, 2), "d": date(2026, 11, 28), "n": float("nan"), "s": "Zürich ✓"}
    return [
        sample([], []),
        sample([("f", {"a": 1})], []),
        sample([], [{"name": "f", "args": {"a": 1}}]),
        sample([("f", odd), ("g", "{not json")], [{"name": "f", "args": {"s": "Zürich ✓"}}]),
        sample([("g", "{not json"), ("f", {})], [{"name": "g", "args": {"x": None}}]),
    ]


def digests(count: int) -> dict[str, str]:
    """A digest of each form, over every metric setting and trajectory."""
    import agent_trajectories

    from langchain_answer_metrics import ToolCallF1, TrajectoryMatch

    samples = [
        {"messages": case["messages"], "reference_messages": case["reference_messages"]}
        for calls in (3, 8)
        for case in agent_trajectories.trajectories(count, calls, seed=calls)
    ] + odd_samples()
    arguments = ("exact", "ignore", "superset", "subset")
    metrics = [
        TrajectoryMatch(mode=mode, tool_args=args)
        for mode in agent_trajectories.MODES
        for args in arguments
    ] + [ToolCallF1(tool_args=args) for args in arguments]
    hashes: dict[str, Any] = {}
    for metric in metrics:
        for sample in samples:
            for name, text in every_form(metric.invoke(sample)).items():
                hashes.setdefault(name, hashlib.sha256()).update(text.encode("utf-8", "replace"))
    for name, metric in (("trajectory_match", metrics[0]), ("tool_call_f1", metrics[-1])):
        model = type(metric.invoke(samples[0]).details)
        schemas = [model.model_json_schema(mode=mode) for mode in ("validation", "serialization")]
        hashes[f"JSON schema {name}"] = hashlib.sha256(json.dumps(schemas).encode())
    return {name: digest.hexdigest() for name, digest in hashes.items()}


def timed(count: int, modes: list[str]) -> dict[str, float]:
    """CPU microseconds per trajectory of each timed form, over ``modes``."""
    import agent_trajectories

    from langchain_answer_metrics import TrajectoryMatch

    cases = agent_trajectories.trajectories(count, 20, seed=1)
    spent = dict.fromkeys(TIMED, 0.0)
    for mode in modes:
        metric = TrajectoryMatch(mode=mode)
        results = [
            metric.invoke(
                {"messages": c["messages"], "reference_messages": c["reference_messages"]}
            )
            for c in cases
        ]
        for name, write in writers().items():
            for result in results[:20]:  # warm: validators, caches
                write(result)
            start = time.process_time()
            for result in results:
                write(result)
            spent[name] += time.process_time() - start
    return {name: seconds / (count * len(modes)) * 1e6 for name, seconds in spent.items()}


def child(args: argparse.Namespace) -> None:
    import langchain_answer_metrics  # from PYTHONPATH's tree, before the benchmarks' path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    out = {
        "package": str(Path(langchain_answer_metrics.__file__).parent.parent),
        "us": timed(args.trajectories, args.modes.split(",")),
        "digests": digests(args.identity_trajectories),
    }
    print(json.dumps(out))


def run_tree(tree: Path, args: argparse.Namespace) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    command = [sys.executable, __file__, "--child", "--trajectories", str(args.trajectories)]
    command += ["--modes", args.modes, "--identity-trajectories", str(args.identity_trajectories)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the run on {tree} failed:\n{done.stderr[-3000:]}")
    out: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    assert Path(out["package"]).resolve() == tree.resolve(), (out["package"], tree)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default=BEFORE, help=f"git ref of 'before' (default {BEFORE})")
    parser.add_argument("--trajectories", type=int, default=2000, help="timed, per mode")
    parser.add_argument("--modes", default="strict,unordered", help="TrajectoryMatch modes timed")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--identity-trajectories", type=int, default=40, help="per call count")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    with tempfile.TemporaryDirectory() as temporary:
        trees = {"before": export_tree(args.before, Path(temporary)), "after": ROOT}
        runs: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
        for round_ in range(args.rounds):
            for name in ("before", "after") if round_ % 2 == 0 else ("after", "before"):
                runs[name].append(run_tree(trees[name], args))
    report(runs, args)


def report(runs: dict[str, list[dict[str, Any]]], args: argparse.Namespace) -> None:
    print(f"CPU us per trajectory (20 calls; modes {args.modes}; {args.trajectories} each),")
    print(f"median of {args.rounds} rounds; before = {args.before}")
    print("| written as | before | after | after / before |\n|---|---|---|---|")
    for name in TIMED:
        before, after = (statistics.median(run["us"][name] for run in runs[side]) for side in runs)
        print(f"| {name} | {before:.0f} us | {after:.0f} us | {after / before:.2f} |")
    first = runs["before"][0]["digests"]
    differing = {
        name
        for run in runs["after"] + runs["before"]
        for name in set(first) | set(run["digests"])
        if run["digests"].get(name) != first.get(name)
    }
    print(f"every written form compared ({len(first)} forms): ", end="")
    for name in sorted(differing & set(FIXED)):
        print(f"\n  {name}: differs, on purpose: {FIXED[name]}", end="")
    if differing - set(FIXED):
        raise SystemExit(f"\nDIFFERENT: {', '.join(sorted(differing - set(FIXED)))}")
    print("\n  every other form identical" if differing else "identical")


if __name__ == "__main__":
    main()
