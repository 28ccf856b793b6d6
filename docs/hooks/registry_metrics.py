"""MkDocs hook: the API reference of the registry's metrics, generated at build time.

docs/api.md holds the marker ``<!-- registry-metrics -->``; every build replaces it with
a ``::: langchain_answer_metrics.Name`` block for each metric the registry exports
(``metrics/exports.py``, in the registry's order), so a metric added with one registry
line is in the API reference with no edit of the page. ``tests/test_docs_site.py``
checks the page, expanded, against the root's ``__all__``.
"""

from __future__ import annotations

from typing import Any

MARKER = "<!-- registry-metrics -->"


def registry_metrics() -> str:
    """Markdown: one mkdocstrings block per registry metric."""
    from langchain_answer_metrics.metrics.exports import metric_names

    return "\n\n".join(f"::: langchain_answer_metrics.{name}" for name in metric_names())


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, registry_metrics())
