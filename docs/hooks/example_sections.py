"""Griffe extension for the API reference: docstrings read as the package writes them.

- ``Example:`` is an examples section. Google style names it "Example:" or "Examples:";
  griffe reads only the plural as examples (``>>>`` lines become code) and the singular as
  an admonition of Markdown, where ``>>>`` would render as nested quotes.
- Sphinx roles (``:func:`name```, ``:class:`~a.b.Name```) become code spans, instead of
  showing as literal ``:func:`` text.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_EXAMPLE = re.compile(r"^(\s*)Example:[ \t]*$", re.M)
_ROLE = re.compile(r":(?:func|class|mod|meth|data|attr|exc|obj):`~?([^`]+)`")


class ExampleSections(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            value = _EXAMPLE.sub(r"\1Examples:", obj.docstring.value)
            obj.docstring.value = _ROLE.sub(r"`\1`", value)
