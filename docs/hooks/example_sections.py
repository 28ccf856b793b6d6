"""Griffe extension for the API reference: a docstring's ``Example:`` is an examples section.

Google style names the section "Example:" or "Examples:"; griffe reads only the plural as
examples (``>>>`` lines become code) and the singular as an admonition of Markdown, where
``>>>`` would render as nested quotes. The package's docstrings use the singular.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_EXAMPLE = re.compile(r"^(\s*)Example:[ \t]*$", re.M)


class ExampleSections(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _EXAMPLE.sub(r"\1Examples:", obj.docstring.value)
