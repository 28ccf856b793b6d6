"""Reading a models file's YAML: safely, refusing duplicate keys, never quoting a line."""

from __future__ import annotations

from typing import Any

import yaml

from langchain_answer_metrics.config.errors import ConfigError

__all__ = ["key_lines", "parse_yaml"]


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a key given twice in one mapping: plain YAML keeps
    the last and silently drops the first (two ``timeout:`` under one provider)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> Any:
        if isinstance(node, yaml.MappingNode):
            first_line: dict[Any, int] = {}
            for key_node, _ in node.value:
                # Keys merged in with ``<<`` may be overridden: only the node's own count.
                if not isinstance(key_node, yaml.ScalarNode) or key_node.tag.endswith(":merge"):
                    continue
                key = self.construct_object(key_node)
                line = key_node.start_mark.line + 1
                if key in first_line:
                    raise yaml.constructor.ConstructorError(
                        None,
                        None,
                        f"duplicate key {str(key)[:60]!r} (lines {first_line[key]} and {line})",
                        key_node.start_mark,
                    )
                first_line[key] = line
        return super().construct_mapping(node, deep=deep)


def parse_yaml(text: str, *, source: str) -> Any:
    """The YAML document in ``text``; :class:`ConfigError` naming the line of a problem
    (never quoting it: a line may hold a pasted key), a key given twice, or a bomb.

        >>> parse_yaml("providers: {}\n", source="models.yaml")
        {'providers': {}}
    """
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader)  # a SafeLoader: no Python objects
    except yaml.YAMLError as error:
        # Built from the problem and position only: the default str() quotes the
        # offending line, which could hold a pasted key.
        mark = getattr(error, "problem_mark", None)
        problem = getattr(error, "problem", None) or "invalid YAML"
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise ConfigError(f"{source}: invalid YAML at {where}{problem}") from None
    except RecursionError:
        raise ConfigError(
            f"{source}: nested too deeply to be a models file (a YAML bomb or a generated "
            "file gone wrong)"
        ) from None
    if data is None:
        raise ConfigError(f"{source}: the file is empty")
    return data


def key_lines(text: str) -> dict[str, int]:
    """The line of each key of a YAML document, by dotted path (``metrics.tone.output``,
    list items as ``[0]``), for errors that name a line; empty when it does not parse.

        >>> key_lines("metrics:\n  tone:\n    output: pass_fail\n")["metrics.tone.output"]
        3
    """
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except (yaml.YAMLError, RecursionError):
        return {}
    lines: dict[str, int] = {}
    pending: list[tuple[str, Any]] = [("", root)]
    while pending and len(lines) < 100_000:
        path, node = pending.pop()
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    child = f"{path}.{key.value}" if path else str(key.value)
                    lines.setdefault(child, key.start_mark.line + 1)
                    pending.append((child, value))
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                lines.setdefault(f"{path}[{index}]", item.start_mark.line + 1)
                pending.append((f"{path}[{index}]", item))
    return lines
