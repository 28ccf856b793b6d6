"""The report's view of the agent metrics.

- A tool-call metric's: the expected calls and the calls the agent made, side by side,
  each marked matched, out of order or unmatched (:func:`trajectory_html`).
- A judged agent metric's (AgentGoalAccuracy, TrajectoryJudge): the trajectory's steps,
  the step each judge faults marked with the judge's reason (:func:`judged_steps_html`).

    >>> trajectory_html(record.metrics["trajectory_match"].trajectory)
    '<div class="trajectory"><table>...'

Every call, step and reason is escaped: they come from the dataset and the judges.
"""

from __future__ import annotations

import html

from langchain_answer_metrics.core.sample import without_surrogates
from langchain_answer_metrics.metrics.agent_calls import CallCell, TrajectoryView
from langchain_answer_metrics.metrics.judged_steps import JudgedStep, JudgedSteps

_MARKS = {
    "matched": ("✓", "matched"),
    "out_of_order": ("↕", "matched, out of order"),
    "unmatched": ("✗", "no match"),
}


def _e(text: object) -> str:
    return html.escape(without_surrogates(str(text)), quote=True)


def _cell(cell: CallCell | None, number: int, other: str) -> str:
    if cell is None:
        return "<td></td>"
    mark, meaning = _MARKS[cell.status]
    partner = f" = {other} {cell.partner}" if cell.partner is not None else ""
    return (
        f'<td class="call call-{cell.status}" title="{_e(meaning)}">'
        f'<span class="mark">{mark}</span> {number}. <code>{_e(cell.call)}</code>'
        f'<span class="stat">{_e(partner)}</span></td>'
    )


def trajectory_html(view: TrajectoryView | None) -> str:
    """The two trajectories as a table (empty text without a view)."""
    if view is None:
        return ""
    rows = []
    for index in range(max(len(view.expected), len(view.made))):
        expected = view.expected[index] if index < len(view.expected) else None
        made = view.made[index] if index < len(view.made) else None
        rows.append(
            f"<tr>{_cell(expected, index + 1, 'agent call')}"
            f"{_cell(made, index + 1, 'expected call')}</tr>"
        )
    if not rows:
        rows.append('<tr><td colspan="2">no calls expected, none made</td></tr>')
    return (
        '<div class="trajectory"><table><thead><tr><th>expected calls</th>'
        f"<th>the agent's calls</th></tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def _step_html(step: JudgedStep) -> str:
    faults = [fault for fault in step.faults if not fault.cited]
    status = "faulted" if faults else "cited" if step.faults else "plain"
    said = "".join(
        f'<li class="{"cited" if fault.cited else "fault"}"><span class="verdict vote-'
        f'{_e(fault.verdict)}">{_e(fault.verdict)}</span>{_e(fault.model)}'
        f"{f' (vote {fault.vote})' if fault.vote > 1 else ''}"
        f"{' cites it' if fault.cited else ' faults it'}: "
        f'<span class="why">{_e(fault.reason)}</span></li>'
        for fault in step.faults
    )
    mark = "✗ " if faults else ""
    text = _e(step.text) if step.text else '<span class="stat">(not in the outline)</span>'
    listed = f'<ul class="faults">{said}</ul>' if said else ""
    return (
        f'<li class="step step-{status}" value="{step.number}">'
        f'<span class="mark">{mark}</span><code>{text}</code>{listed}</li>'
    )


def judged_steps_html(steps: JudgedSteps | None) -> str:
    """The trajectory's steps, the faulted ones marked with each judge's reason (empty
    text without steps). A gap in the numbering says how many steps are not shown."""
    if steps is None or not steps.outline:
        return ""
    items: list[str] = []
    previous = 0
    for step in steps.outline:
        if step.number > previous + 1:
            items.append(_gap(previous + 1, step.number - 1))
        items.append(_step_html(step))
        previous = step.number
    if previous < steps.steps:
        items.append(_gap(previous + 1, steps.steps))
    faulted = sum(any(not f.cited for f in step.faults) for step in steps.outline)
    summary = (
        f"{faulted} step{'s' if faulted != 1 else ''} faulted" if faulted else "no step faulted"
    )
    # Open where a judge faults a step: that is what a reader looks for.
    return (
        f'<details class="steps"{" open" if faulted else ""}><summary>the trajectory '
        f"({steps.steps} steps; {summary})</summary><ol>{''.join(items)}</ol></details>"
    )


def _gap(first: int, last: int) -> str:
    count = last - first + 1
    return (
        f'<li class="gap" value="{first}"><span class="stat">… {count} '
        f"step{'s' if count != 1 else ''} ({first} to {last}) not shown</span></li>"
    )
