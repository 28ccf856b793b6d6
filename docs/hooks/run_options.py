"""Griffe extension for the API reference: a runner function shows its run options.

The public runner functions are written ``body(samples, metrics, options: RunOptions)``
and decorated with ``@takes_run_options``, which gives them RunOptions' fields as
keyword-only arguments (for type checkers and ``inspect.signature``). Griffe reads the
source, so this extension does the same for the page: the ``options`` parameter becomes
one keyword-only parameter per RunOptions field (type, default, and its docstring in the
Args table), read from the class as declared.
"""

from __future__ import annotations

from typing import Any

import griffe

DECORATOR = "langchain_answer_metrics.run.options.takes_run_options"
OPTIONS = "langchain_answer_metrics.run.options.RunOptions"


class RunOptionKeywords(griffe.Extension):
    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        # Once the whole package is loaded: RunOptions and the functions, in any order.
        options = pkg.modules_collection[OPTIONS]
        fields = [
            member
            for member in options.members.values()
            if isinstance(member, griffe.Attribute) and not member.name.startswith("_")
        ]
        for func in _functions(pkg):
            if any(_path(decorator.value) == DECORATOR for decorator in func.decorators):
                _expand(func, fields)


def _functions(obj: griffe.Object) -> list[griffe.Function]:
    found: list[griffe.Function] = []
    for member in obj.members.values():
        if member.is_alias:
            continue
        if isinstance(member, griffe.Function):
            found.append(member)
        elif isinstance(member, griffe.Module):
            found += _functions(member)
    return found


def _expand(func: griffe.Function, fields: list[griffe.Attribute]) -> None:
    """``options`` becomes one keyword-only parameter per field, in the signature and in
    the docstring's Args."""
    if "options" not in func.parameters:
        return
    # The docstring first: parsed against the signature as written, it warns of nothing.
    if func.docstring is not None:
        for section in func.docstring.parsed:
            if section.kind is griffe.DocstringSectionKind.parameters:
                section.value = [item for item in section.value if item.name != "options"] + [
                    griffe.DocstringParameter(
                        field.name,
                        annotation=_unwrapped(field.annotation),
                        value=field.value,
                        description=field.docstring.value if field.docstring else "",
                    )
                    for field in fields
                ]
    del func.parameters["options"]
    for field in fields:
        func.parameters[field.name] = griffe.Parameter(
            field.name,
            annotation=_unwrapped(field.annotation),
            kind=griffe.ParameterKind.keyword_only,
            default=field.value,
            docstring=field.docstring,
        )


def _unwrapped(annotation: Any) -> Any:
    """``SkipValidation[X]`` (pydantic's marker) read as ``X``."""
    if isinstance(annotation, griffe.ExprSubscript) and _path(annotation.left).endswith(
        "SkipValidation"
    ):
        return annotation.slice
    return annotation


def _path(value: Any) -> str:
    return str(getattr(value, "canonical_path", value))
