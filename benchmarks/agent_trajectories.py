"""TrajectoryMatch beside agentevals' create_trajectory_match_evaluator, on the same
trajectories, in one run: CPU time per trajectory and agreement, for each mode.

    python benchmarks/agent_trajectories.py                # 10,000 trajectories x 20 calls
    python benchmarks/agent_trajectories.py --trajectories 500 --quick

Needs agentevals (``pip install -e .[bench]``). Each trajectory is the agent's messages
(OpenAI chat dicts: 20 calls in AI messages of one to three parallel calls, each call
answered by a tool message, then a final answer) and a reference trajectory in the same
form, made from it by one of the perturbations below (or none). Ours scores them through
the runner (``evaluate_dataset``, the samples given as dicts of ``messages`` and
``reference_messages``, so reading the messages is counted); agentevals' evaluator is
called once per trajectory, as its docs show. ``time.process_time()`` around each.

The perturbations, and the verdict each mode should give (our definitions, which are
agentevals' documented ones measured on tool calls):

- ``same``: the reference is the trajectory itself;
- ``regrouped``: the same calls in the same order, grouped into AI messages differently
  (how calls are grouped does not matter);
- ``parallel_swapped``: two calls of one AI message swapped (parallel calls: no order);
- ``reordered``: two calls of different AI messages swapped;
- ``dropped``: one expected call the agent did not make (the reference has one more);
- ``extra``: one call the agent made that the reference does not have;
- ``changed_arg``: one argument value different;
- ``bool_for_int``: an argument ``1`` in one, ``true`` in the other (JSON: different);
- ``more_args``: one call with an argument more than the reference's (argument modes);
- ``greedy_trap``: two more calls of one tool, ``f(a, b)`` then ``f(a)``, where the
  reference has ``f(a)`` then ``f(a, b)``: under ``tool_args="superset"`` the first call
  fits both expected calls, and a greedy pass gives it to the wrong one.

Timed twice: through the runner (what the issue asks), and the metric's own ``invoke``
per trajectory (the runner's own cost per sample set apart). Each mode runs ``--rounds``
rounds (default 3), the two sides alternating which goes first; each round gives a CPU
ratio, and the median is reported. The garbage collector's share of our runner's time is
measured too (``gc.callbacks``), and how many objects it tracks per row a run keeps: a run
keeps every result, details included, and the collector's full passes walk them all again
as the heap grows (197 per row while the alignment was a list of models, 17 since it is
kept compact; RESULTS.md).
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from langchain_answer_metrics import TrajectoryMatch, evaluate_dataset

TOOLS = {
    "search": lambda r: {"query": r.choice(["paris", "lyon", "nice"]), "limit": r.randint(1, 5)},
    "get_weather": lambda r: {"city": r.choice(["Paris", "Lyon", "Nice"]), "days": r.randint(1, 3)},
    "book_hotel": lambda r: {"city": r.choice(["Paris", "Lyon"]), "nights": r.randint(1, 4)},
    "convert": lambda r: {"amount": r.randint(1, 500), "to": r.choice(["EUR", "USD"])},
    "email": lambda r: {"to": r.choice(["a@x.org", "b@x.org"]), "urgent": r.choice([True, False])},
}
PERTURBATIONS = (
    "same",
    "regrouped",
    "parallel_swapped",
    "reordered",
    "dropped",
    "extra",
    "changed_arg",
    "bool_for_int",
    "more_args",
    "greedy_trap",
)
MODES = ("strict", "unordered", "superset", "subset")


def calls_of(rng: random.Random, count: int) -> list[dict[str, Any]]:
    names = list(TOOLS)
    return [{"name": (name := rng.choice(names)), "args": TOOLS[name](rng)} for _ in range(count)]


def grouped(rng: random.Random, calls: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    groups, index = [], 0
    while index < len(calls):
        size = rng.choice([1, 1, 1, 2, 3])
        groups.append(calls[index : index + size])
        index += size
    return groups


def messages(groups: list[list[dict[str, Any]]], tag: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "user", "content": "Plan my trip."}]
    counter = 0
    for group in groups:
        ids = [f"{tag}{counter + offset}" for offset in range(len(group))]
        counter += len(group)
        out.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": call["name"], "arguments": json.dumps(call["args"])},
                    }
                    for call_id, call in zip(ids, group)
                ],
            }
        )
        out += [{"role": "tool", "tool_call_id": call_id, "content": "ok"} for call_id in ids]
    return [*out, {"role": "assistant", "content": "Done."}]


def perturbed(
    rng: random.Random, groups: list[list[dict[str, Any]]], kind: str
) -> list[list[dict[str, Any]]]:
    """The reference trajectory: ``groups`` changed by ``kind`` (see the docstring)."""
    groups = copy.deepcopy(groups)
    flat = [call for group in groups for call in group]
    if kind == "regrouped":
        return grouped(rng, flat)
    if kind == "parallel_swapped":
        multi = [group for group in groups if len(group) > 1]
        if multi:
            group = rng.choice(multi)
            group[0], group[1] = group[1], group[0]
        return groups
    if kind == "reordered":
        first, second = rng.sample(range(len(groups)), 2)
        groups[first][0], groups[second][0] = groups[second][0], groups[first][0]
        return groups
    if kind == "dropped":  # the reference expects a call the agent did not make
        groups.insert(rng.randrange(len(groups) + 1), calls_of(rng, 1))
        return groups
    if kind == "extra":  # the agent made a call the reference lacks
        group = rng.choice([group for group in groups if group])
        group.pop(rng.randrange(len(group)))
        return [group for group in groups if group]
    call = rng.choice(flat)
    if kind == "changed_arg":
        key = rng.choice(list(call["args"]))
        value = call["args"][key]
        call["args"][key] = (
            (not value)
            if isinstance(value, bool)
            else (value + 1 if isinstance(value, int) else value + "x")
        )
    elif kind == "more_args":
        call["args"].pop(next(iter(call["args"])))  # the agent's call has one argument more
    return groups


def trajectories(count: int, calls: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    cases = []
    for index in range(count):
        kind = PERTURBATIONS[index % len(PERTURBATIONS)]
        made = grouped(rng, calls_of(rng, calls))
        if kind == "greedy_trap":
            full = {"name": "convert", "args": {"amount": 10, "to": "EUR"}}
            less = {"name": "convert", "args": {"amount": 10}}
            made.append([copy.deepcopy(full), copy.deepcopy(less)])
            reference = [*copy.deepcopy(made[:-1]), [copy.deepcopy(less), copy.deepcopy(full)]]
        elif kind == "bool_for_int":  # the agent says true where the reference says 1
            flat = [call for group in made for call in group]
            chosen = rng.randrange(len(flat))
            flat[chosen]["args"]["flag"] = True
            reference = copy.deepcopy(made)
            [call for group in reference for call in group][chosen]["args"]["flag"] = 1
        else:
            reference = perturbed(rng, made, kind)
        cases.append(
            {
                "kind": kind,
                "messages": messages(made, "a"),
                "reference_messages": messages(reference, "r"),
            }
        )
    return cases


class CollectorTime:
    """CPU time spent in the cyclic garbage collector's passes while it is entered (read
    from ``gc.callbacks``): how much of a side's time goes to full collections of the
    objects it keeps."""

    def __init__(self) -> None:
        self.spent = 0.0
        self._started = 0.0

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.process_time()
        else:
            self.spent += time.process_time() - self._started

    def __enter__(self) -> CollectorTime:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc_info: object) -> None:
        gc.callbacks.remove(self._callback)


def ours(
    cases: list[dict[str, Any]], mode: str, tool_args: str
) -> tuple[list[float], float, float]:
    """Our verdicts through the runner, its CPU time, and the part of it the garbage
    collector took."""
    samples = [
        {"messages": c["messages"], "reference_messages": c["reference_messages"]} for c in cases
    ]
    metric = TrajectoryMatch(mode=mode, tool_args=tool_args)
    gc.collect()  # each side starts from the same heap
    with CollectorTime() as collector:
        start = time.process_time()
        results = evaluate_dataset(samples, metrics=[metric], max_concurrency=64)
        spent = time.process_time() - start
    return [row.results[metric.key].score for row in results], spent, collector.spent


def tracked_per_result(cases: list[dict[str, Any]], mode: str, tool_args: str) -> float:
    """How many objects the garbage collector tracks per row a run keeps (its result and
    details included): what each of its full passes walks again, per trajectory."""
    samples = [
        {"messages": c["messages"], "reference_messages": c["reference_messages"]}
        for c in cases[:1000]
    ]
    metric = TrajectoryMatch(mode=mode, tool_args=tool_args)
    gc.collect()
    before = len(gc.get_objects())
    kept = evaluate_dataset(samples, metrics=[metric], max_concurrency=64)
    gc.collect()
    grown = len(gc.get_objects()) - before
    assert len(kept) == len(samples)
    return grown / len(samples)


def direct(cases: list[dict[str, Any]], mode: str, tool_args: str) -> float:
    """CPU time of the metric's own ``invoke`` on each trajectory (no runner)."""
    metric = TrajectoryMatch(mode=mode, tool_args=tool_args)
    gc.collect()
    start = time.process_time()
    for case in cases:
        metric.invoke(
            {"messages": case["messages"], "reference_messages": case["reference_messages"]}
        )
    return time.process_time() - start


def theirs(cases: list[dict[str, Any]], mode: str, tool_args: str) -> tuple[list[Any], float]:
    from agentevals.trajectory.match import create_trajectory_match_evaluator

    evaluator = create_trajectory_match_evaluator(
        trajectory_match_mode=mode, tool_args_match_mode=tool_args
    )
    verdicts = []
    gc.collect()
    start = time.process_time()
    for case in cases:
        try:
            verdicts.append(
                1.0
                if evaluator(
                    outputs=case["messages"], reference_outputs=case["reference_messages"]
                )["score"]
                else 0.0
            )
        except Exception as error:  # recorded, not hidden: a crash is a disagreement
            verdicts.append(f"{type(error).__name__}")
    return verdicts, time.process_time() - start


class Measure(NamedTuple):
    """One mode's figures: both sides' verdicts, the median of the per-round CPU ratios
    (ours / agentevals, through the runner and ``invoke`` alone), and the medians of
    each side's CPU time and of the collector's share of ours."""

    ours: list[Any]
    theirs: list[Any]
    ratio: float
    invoke_ratio: float
    our_cpu: float
    invoke_cpu: float
    their_cpu: float
    our_gc: float


def measured(cases: list[dict[str, Any]], mode: str, tool_args: str, rounds: int) -> Measure:
    """Both sides' verdicts and CPU times over ``rounds`` rounds, the sides alternating
    within each round (the machine is shared: a burst of load hits both alike); each
    round gives a ratio, and the median ratio is reported."""
    ours(cases[:50], mode, tool_args)  # warm both (imports, pydantic's validators)
    theirs(cases[:50], mode, tool_args)
    our_times, direct_times, their_times, gc_times = [], [], [], []
    for round_number in range(rounds):
        # Alternate which side goes first, so neither always runs on the warmer heap.
        if round_number % 2:
            their_scores, their_spent = theirs(cases, mode, tool_args)
            our_scores, our_spent, our_gc = ours(cases, mode, tool_args)
        else:
            our_scores, our_spent, our_gc = ours(cases, mode, tool_args)
            their_scores, their_spent = theirs(cases, mode, tool_args)
        our_times.append(our_spent)
        their_times.append(their_spent)
        gc_times.append(our_gc)
        direct_times.append(direct(cases, mode, tool_args))
    median = statistics.median
    return Measure(
        our_scores,
        their_scores,
        median(o / t for o, t in zip(our_times, their_times)),
        median(d / t for d, t in zip(direct_times, their_times)),
        median(our_times),
        median(direct_times),
        median(their_times),
        median(gc_times),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trajectories", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--seed", type=int, default=28)
    parser.add_argument(
        "--tool-args",
        default="exact,superset,subset",
        help="argument modes to run (comma-separated)",
    )
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds per mode")
    parser.add_argument(
        "--modes", default=",".join(MODES), help="trajectory modes to run (comma-separated)"
    )
    parser.add_argument("--json", type=Path, help="write the figures here")
    options = parser.parse_args()
    cases = trajectories(options.trajectories, options.calls, options.seed)
    print(f"{len(cases):,} trajectories of {options.calls} calls, seed {options.seed}")
    report: dict[str, Any] = {}
    for tool_args in options.tool_args.split(","):
        for mode in options.modes.split(","):
            measure = measured(cases, mode, tool_args, options.rounds)
            disagreements = Counter(
                (case["kind"], ours_, theirs_)
                for case, ours_, theirs_ in zip(cases, measure.ours, measure.theirs)
                if ours_ != theirs_
            )
            agree = len(cases) - sum(disagreements.values())
            tracked = tracked_per_result(cases, mode, tool_args)
            count = len(cases)
            print(
                f"\n{mode} / args {tool_args}: per trajectory (medians of {options.rounds} "
                f"rounds), ours through the runner {1e6 * measure.our_cpu / count:.0f} us "
                f"(of which the garbage collector {1e6 * measure.our_gc / count:.0f} us), "
                f"invoke alone {1e6 * measure.invoke_cpu / count:.0f} us, agentevals "
                f"{1e6 * measure.their_cpu / count:.0f} us (median ratios "
                f"{measure.ratio:.2f}, {measure.invoke_ratio:.2f}); agreement "
                f"{agree:,}/{count:,}; {tracked:.0f} objects tracked by the collector per "
                "row kept"
            )
            for (kind, ours_, theirs_), times in sorted(disagreements.items()):
                print(f"  {kind:>16}: ours {ours_}, agentevals {theirs_}  x{times}")
            report[f"{mode}/{tool_args}"] = {
                "ours_us": 1e6 * measure.our_cpu / count,
                "ours_gc_us": 1e6 * measure.our_gc / count,
                "invoke_us": 1e6 * measure.invoke_cpu / count,
                "invoke_ratio": measure.invoke_ratio,
                "agentevals_us": 1e6 * measure.their_cpu / count,
                "ratio": measure.ratio,
                "agree": agree,
                "tracked_per_row": tracked,
                "disagreements": {
                    f"{k} ours={o} theirs={t}": n for (k, o, t), n in disagreements.items()
                },
            }
    for name in ("ratio", "invoke_ratio"):
        ratios = [item[name] for item in report.values()]
        print(
            f"CPU {name} ours/agentevals: median {statistics.median(ratios):.2f}, "
            f"max {max(ratios):.2f}"
        )
    if options.json:
        options.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
