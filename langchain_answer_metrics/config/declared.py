"""Reading a config file's ``metrics:`` section without building a model or reading a key.

The CLI learns the names of the judges a config declares (``--metric conciseness``) before
it builds the panel; a problem found later in a declaration (a scale with a gap, found when
the judge is built) is reported at its YAML line like the file's other problems.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from langchain_answer_metrics.config.errors import (
    ConfigError,
    config_error,
    located,
    validation_problems,
)
from langchain_answer_metrics.config.judges import JudgeDeclaration
from langchain_answer_metrics.config.schema import ModelsConfig
from langchain_answer_metrics.config.yaml_file import key_lines, parse_yaml

__all__ = [
    "declaration_error",
    "declared_metrics",
    "given_settings",
    "lists_models",
    "read_config_text",
]


def read_config_text(path: str | Path) -> str:
    """The text of a config file; :class:`ConfigError` when it cannot be read."""
    file = Path(path).expanduser()
    try:
        return file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"cannot read config file {file}: {error}") from None


def _validated(path: str | Path) -> ModelsConfig:
    source = str(Path(path).expanduser())
    text = read_config_text(path)
    data = parse_yaml(text, source=source)
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the top level must be a mapping (providers:, metrics:...)")
    try:
        return ModelsConfig.model_validate(data)
    except ValidationError as error:
        raise config_error(source, located(validation_problems(error), key_lines(text))) from None


def lists_models(path: str | Path) -> bool:
    """Whether the config file at ``path`` lists models (providers, chat or embedding
    models): a file of ``metrics:`` alone takes its models from elsewhere (the CLI's
    ``--base-url`` or the environment)."""
    config = _validated(path)
    return bool(config.providers or config.chat_models.models or config.embedding_models.models)


def declared_metrics(path: str | Path) -> dict[str, JudgeDeclaration]:
    """The judges the config file at ``path`` declares under ``metrics:``, by name.

    The whole file's shape is checked (a config is one file), nothing is built and no
    environment variable is read.

    Raises:
        ConfigError: naming the key path and YAML line of every problem.

    Example:
        >>> declared_metrics("judges.yaml")["conciseness"].output.kind
        'scale'
    """
    return dict(_validated(path).metrics)


def given_settings(path: str | Path) -> dict[str, dict[str, Any]]:
    """The built-in metrics' settings the config file at ``path`` gives under ``metrics:``
    (the entries that declare no judge), by metric name, as written in the file.

    Which metric takes which setting is the registry's knowledge: the face that builds the
    metrics checks them (the CLI: :mod:`langchain_answer_metrics.cli.configured`).

    Raises:
        ConfigError: naming the key path and YAML line of every problem in the file.

    Example:
        >>> given_settings("agents.yaml")
        {'trajectory_match': {'mode': 'unordered', 'tool_args': 'subset'}}
    """
    return {name: dict(entry) for name, entry in _validated(path).metric_settings.items()}


def declaration_error(path: str | Path, problems: Sequence[tuple[str, str]]) -> ConfigError:
    """One :class:`ConfigError` for problems found in the declarations of the file at
    ``path`` (key paths such as ``metrics.tone.prompt``), each at its YAML line."""
    source = str(Path(path).expanduser())
    try:
        lines = key_lines(read_config_text(path))
    except ConfigError:
        lines = {}
    return config_error(source, located(problems, lines))
