"""How a value found in a row is read as its field's type, the same way for every face.

A DataFrame cell, a list of dicts, a JSONL or CSV line, a Parquet or Ray row and a
LangSmith run all hold their values as the user wrote them; :func:`typed_value` is the one
reading of them. A text field takes a string, a number, a ``Document`` or a message; the
contexts take a list of texts or ``Document``\\ s, or one text, and a text that holds a JSON
list (``'["first", "second"]'``, what a CSV cell or ``pd.read_csv`` gives) is that list.
Any other text is one context, even one that starts with ``[`` (a citation marker:
``[1] Paris is the capital.``).

A contexts text is parsed by :func:`~langchain_answer_metrics.core.json_text.parse_json`, which
refuses JSON nested too deeply (:class:`~langchain_answer_metrics.core.json_text.JSONTooDeepError`)
instead of letting Python's ``RecursionError`` out.

    >>> typed_value("retrieved_contexts", '["Paris is in France.", "Lyon too."]')
    ['Paris is in France.', 'Lyon too.']
"""

from __future__ import annotations

import json
from typing import Any

from langchain_answer_metrics.core.json_text import JSONTooDeepError, parse_json
from langchain_answer_metrics.core.sample import as_contexts, as_text
from langchain_answer_metrics.mapping.lookup import AGENT_ROW_FIELDS


def json_list_cell(text: str) -> list[Any] | None:
    """The list a text holds as JSON (``'["a", "b"]'``), or None for any other text.

    Raises:
        JSONTooDeepError: the text is JSON nested too deeply to read.
    """
    if not text.lstrip().startswith("["):
        return None
    try:
        value = parse_json(text)
    except json.JSONDecodeError:
        return None  # "[1] Paris is the capital.": a citation marker, not a list
    return value if isinstance(value, list) else None


def cell_value(field: str, value: Any) -> Any:
    """``value`` as a row holds it, the contexts' text holding a JSON list read as that
    list; anything else unchanged.

    Raises:
        JSONTooDeepError: a contexts text holding JSON nested too deeply to read.
    """
    if field == "retrieved_contexts" and isinstance(value, str):
        listed = json_list_cell(value)
        return value if listed is None else listed
    return value


def as_field_type(field: str, value: Any) -> Any:
    """A cell's value (:func:`cell_value`) as ``field``'s type: contexts a list of texts,
    an agent's messages and calls as found (``AgentSample`` reads them), any other field a
    text.

    Raises:
        TypeError: the value cannot be read so; the message says what it holds
            ("holds a number, expected texts").
    """
    if field in AGENT_ROW_FIELDS:
        return value  # read by AgentSample, which names the field and position at fault
    return as_contexts(value) if field == "retrieved_contexts" else as_text(value)


def typed_value(field: str, value: Any) -> Any:
    """``value`` read as ``field``'s type, the one reading of every face:
    :func:`cell_value`, then :func:`as_field_type`.

    Raises:
        TypeError: the value cannot be read so ("holds a number, expected texts").
        JSONTooDeepError: a contexts text holding JSON nested too deeply to read.

    Example:
        >>> typed_value("response", 42), typed_value("retrieved_contexts", "One text.")
        ('42', ['One text.'])
    """
    return as_field_type(field, cell_value(field, value))


__all__ = [
    "JSONTooDeepError",
    "as_field_type",
    "cell_value",
    "json_list_cell",
    "typed_value",
]
