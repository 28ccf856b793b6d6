"""The report's view of a tool-call metric: the expected calls and the calls the agent
made, side by side, each marked matched, out of order or unmatched.

    >>> trajectory_html(record.metrics["trajectory_match"].trajectory)
    '<div class="trajectory"><table>...'

Every call is escaped: arguments come from the dataset.
"""

from __future__ import annotations

import html

from langchain_answer_metrics.core.sample import without_surrogates
from langchain_answer_metrics.metrics.agent_calls import CallCell, TrajectoryView

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
