"""What a run keeps of what it did: one JSON line per finished sample, and what a rerun
may reuse of it.

The runner's ``checkpoint=`` file and the CLI's ``--out`` file are both written and read
here, with the same rules:

- a line is appended, flushed and fsynced as soon as its sample is finished
  (:func:`append_line`), so a killed run loses at most the line it was writing;
- a line cut short (a SIGKILL mid-write, even inside a multi-byte UTF-8 character) is
  unreadable, and is ignored and redone (:func:`read_lines`); a rerun that appends
  first rewrites the file without it, atomically, so the file stays valid JSON Lines
  for other readers (``pandas.read_json(path, lines=True)``) (:func:`open_for_append`);
- a report or summary is written whole or not at all (:func:`write_atomically`): a
  full disk leaves the previous file, or none, never half of one;
- a saved outcome is reused only for the same sample text (:func:`sample_fingerprint`)
  scored by a metric with the same settings and models (:func:`metric_signature`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import uuid
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from langchain_core.messages import BaseMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder

from langchain_answer_metrics.judging.prompt_set import (
    DEFAULT_STEP_PROMPTS,
    REGISTERED_STEPS,
    FewShotExample,
)
from langchain_answer_metrics.judging.prompts import DEFAULT_PROMPTS, PROMPT_VERSION
from langchain_answer_metrics.metrics.base import AnswerMetric, JudgedMetric
from langchain_answer_metrics.metrics.registry import METRICS
from langchain_answer_metrics.sample import without_surrogates


def sample_fingerprint(sample: Any) -> str:
    """A hash of a sample's text: a rerun re-scores a sample whose text changed.

    ``sample`` is a :class:`~langchain_answer_metrics.sample.Sample` (its fields) or any
    JSON-like value (a dict as given to the runner).
    """
    data = sample.model_dump() if hasattr(sample, "model_dump") else sample
    payload = json.dumps(data, sort_keys=True, ensure_ascii=False, default=str)
    # surrogatepass: a text with a lone surrogate still has a stable fingerprint (the
    # metrics refuse such a sample, naming the field).
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def settings_signature(name: str, settings: Mapping[str, Any]) -> str:
    """A hash of a metric's name and the settings that change its scores."""
    payload = json.dumps({"metric": name, **settings}, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def metric_signature(metric: AnswerMetric) -> str:
    """The settings of ``metric`` a saved score must share to be reused: its models'
    labels and the settings its registry entry names (criterion, strictness ...)."""
    entry = next(
        (entry for entry in METRICS.values() if type(metric) is entry.metric_class), None
    )
    settings: dict[str, Any] = {}
    models: dict[str, Any] = dict(metric)
    if "llm" in models:
        settings["judges"] = [judge.label for judge in models["llm"]]
    if "embeddings" in models:
        settings["embedders"] = [embedder.label for embedder in models["embeddings"]]
    if entry is not None:
        settings.update({name: getattr(metric, field) for name, field in entry.signature.items()})
        # Settings a Python caller moved off their defaults (mode, beta, aggregation ...).
        changed = _changed_settings(metric, set(entry.signature.values()))
        if changed:
            settings["changed"] = changed
        settings.update(prompt_settings(metric))
        if settings.get("judges") and "prompt_version" not in settings:
            # A composite (AnswerCorrectness) asks its judges through a component built
            # with the default prompts: their version is what its scores depend on.
            settings["prompt_version"] = PROMPT_VERSION
        return settings_signature(entry.key, settings)
    # A metric of the user's own: its class and its plain settings.
    plain = {
        name: value
        for name, value in vars(metric).items()
        if isinstance(value, (str, int, float, bool, type(None)))
    }
    return settings_signature(
        f"{type(metric).__module__}.{type(metric).__qualname__}",
        {**settings, **plain, **prompt_settings(metric)},
    )


def prompt_settings(metric: AnswerMetric) -> dict[str, Any]:
    """What a metric's prompts add to its signature: for a metric with judge steps, the
    version of the default prompts (:data:`~.judging.prompts.PROMPT_VERSION`) and, for
    each step whose prompt or examples the caller replaced, their text (never a repr,
    which changes with langchain-core's)."""
    if not isinstance(metric, JudgedMetric) or not metric.prompt_steps:
        return {}
    custom: dict[str, Any] = {}
    for step in metric.prompt_steps:
        template = metric.prompts.get(step, DEFAULT_PROMPTS[step])
        examples = tuple(metric.examples.get(step, ()))
        signed = {"messages": _template_text(template), "examples": _examples_text(examples)}
        default = DEFAULT_STEP_PROMPTS[step]
        if signed != {
            "messages": _template_text(default.template),
            "examples": _examples_text(default.examples),
        }:
            custom[step] = signed
    versions = {
        step: REGISTERED_STEPS[step].version
        for step in metric.prompt_steps
        if step in REGISTERED_STEPS
    }
    return {
        "prompt_version": PROMPT_VERSION,
        **({"step_versions": versions} if versions else {}),
        **({"prompts": custom} if custom else {}),
    }


def _template_text(template: ChatPromptTemplate) -> list[str]:
    """Each message of a template as ``role: text``."""
    lines = []
    for message in template.messages:
        if isinstance(message, BaseMessage):
            content = message.content
            text = content if isinstance(content, str) else json.dumps(content, sort_keys=True)
            lines.append(f"{message.type}: {text}")
        elif isinstance(message, MessagesPlaceholder):
            lines.append(f"placeholder: {message.variable_name}")
        else:
            role = getattr(message, "role", None) or type(message).__name__.removesuffix(
                "MessagePromptTemplate"
            ).lower()
            prompts = getattr(message, "prompt", None)
            parts = prompts if isinstance(prompts, list) else [prompts]
            text = "".join(str(getattr(part, "template", part)) for part in parts)
            lines.append(f"{role}: {text}")
    return lines


def _examples_text(examples: Iterable[FewShotExample]) -> list[str]:
    return [
        json.dumps(
            {"input": dict(example.input), "output": example.output.model_dump(mode="json")},
            sort_keys=True, ensure_ascii=False, default=str,
        )
        for example in examples
    ]


def _changed_settings(metric: AnswerMetric, named: set[str]) -> dict[str, Any]:
    """The metric's settings that differ from their defaults, other than its models, its
    name, its prompts (:func:`prompt_settings`) and the ``named`` ones, as stable
    JSON-ready values."""
    skip = {"llm", "embeddings", "name", "prompts", "examples", *named}
    changed: dict[str, Any] = {}
    for field, info in type(metric).model_fields.items():
        if field in skip:
            continue
        value = getattr(metric, field)
        if value != info.get_default(call_default_factory=True):
            changed[field] = _stable(value)
    return changed


def _stable(value: Any) -> Any:
    """``value`` as something that serialises the same in every process."""
    if isinstance(value, AnswerMetric):
        return metric_signature(value)  # a component metric (AnswerCorrectness)
    if callable(value) and not isinstance(value, type):
        # A custom aggregation: named by where it is defined (an address would change).
        return f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', repr(value))}"
    if isinstance(value, Mapping):
        return {str(key): _stable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_stable(item) for item in value]
    if isinstance(value, (str, int, float, bool, type(None))):
        return value
    return repr(value)


def read_lines(path: Path) -> tuple[list[Any], int]:
    """The JSON values of the file's lines, and how many lines could not be read (cut
    short, not UTF-8, not JSON). A missing file has none."""
    values: list[Any] = []
    unreadable = 0
    for _, value in iter_lines(path):
        if value is _UNREADABLE:
            unreadable += 1
        else:
            values.append(value)
    return values, unreadable


_UNREADABLE: Any = object()


def iter_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """Each non-blank line's byte offset and JSON value, read a line at a time;
    :data:`_UNREADABLE` for a line that is cut short, not UTF-8 or not JSON. A missing
    file has none."""
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        return
    with handle:
        offset = 0
        for raw in handle:
            start, offset = offset, offset + len(raw)
            if not raw.strip():
                continue
            try:
                yield start, json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, ValueError):
                yield start, _UNREADABLE


def is_unreadable(value: Any) -> bool:
    """Whether ``value`` (from :func:`iter_lines`) stands for a line that was not JSON."""
    return value is _UNREADABLE


def drop_torn_lines(path: Path) -> int:
    """Rewrite ``path`` without its unreadable lines (a line cut short by a kill),
    atomically; returns how many were dropped. Readable lines are kept byte for byte."""
    if not path.is_file() or not any(is_unreadable(v) for _, v in iter_lines(path)):
        return 0
    dropped = 0

    def kept() -> Iterator[bytes]:
        nonlocal dropped
        with path.open("rb") as handle:
            for raw in handle:
                if not raw.strip():
                    continue
                try:
                    json.loads(raw.decode("utf-8"))
                except (UnicodeDecodeError, ValueError):
                    dropped += 1
                    continue
                yield raw if raw.endswith(b"\n") else raw + b"\n"

    write_atomically(path, kept())
    return dropped


def write_atomically(path: Path, chunks: Iterable[str | bytes]) -> None:
    """Write ``chunks`` to ``path`` whole or not at all: into a temporary file in the same
    folder, fsynced, then renamed over ``path``. On any error (a full disk, a file-size
    limit) the temporary file is removed, ``path`` is left as it was, and the error is
    raised. A path that is not a regular file (``/dev/stdout``) is written directly."""
    if path.exists() and not path.is_file():
        with path.open("ab") as direct:
            for chunk in chunks:
                direct.write(chunk.encode("utf-8") if isinstance(chunk, str) else chunk)
        return
    # Opened like any new file (the umask applies), under a name no one else uses.
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with temporary.open("xb") as handle:
            for chunk in chunks:
                handle.write(chunk.encode("utf-8") if isinstance(chunk, str) else chunk)
            handle.flush()
            os.fsync(handle.fileno())
        if path.exists():
            with contextlib.suppress(OSError):
                os.chmod(temporary, path.stat().st_mode)  # keep the replaced file's mode
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


def open_for_append(path: Path) -> IO[str]:
    """``path`` opened for appending lines. Unreadable lines (cut short by a kill) are
    dropped first (:func:`drop_torn_lines`), so one cannot swallow the next line and the
    file stays valid JSON Lines. Raises OSError when it cannot be written."""
    drop_torn_lines(path)
    ends_cleanly = True
    # Only a regular file is read: /dev/stdout or a pipe would block, /dev/full or
    # /dev/zero would never end.
    if path.is_file() and path.stat().st_size:
        with path.open("rb") as tail:
            tail.seek(-1, os.SEEK_END)
            ends_cleanly = tail.read(1) == b"\n"
    file = path.open("a", encoding="utf-8")
    if not ends_cleanly:
        file.write("\n")
    return file


def append_line(file: IO[str], line: str) -> None:
    """Write one line and make it durable: flushed and fsynced (raises OSError)."""
    file.write(line if line.endswith("\n") else line + "\n")
    file.flush()
    try:
        os.fsync(file.fileno())
    except OSError as error:
        # A pipe or a character device (--out /dev/stdout) cannot be synced; fine.
        if error.errno not in _UNSYNCABLE:
            raise


_UNSYNCABLE = {22, 95}  # EINVAL, EOPNOTSUPP


def json_line(value: Any) -> str:
    """``value`` as one JSON line, keeping non-ASCII text readable; a lone surrogate,
    which UTF-8 cannot hold, becomes U+FFFD."""
    return without_surrogates(json.dumps(value, ensure_ascii=False)) + "\n"




class Checkpoint:
    """The runner's ``checkpoint=`` file: the samples already finished, and new ones
    appended as they finish.

    A line holds a sample's position, its fingerprint and, per metric key, the metric's
    signature with its result (``MetricResult`` as JSON) or its error. A saved result is
    reused when the sample at that position has the same fingerprint and the metric the
    same signature; errors are always redone, and so are results from which a judge was
    excluded (a transient failure) unless ``keep_degraded``.
    """

    VERSION = 1

    def __init__(
        self, path: str | os.PathLike[str], signatures: Mapping[str, str],
        *, keep_degraded: bool = False,
    ) -> None:
        self.path = Path(path)
        self.signatures = dict(signatures)
        self.keep_degraded = keep_degraded
        values, self.unreadable = read_lines(self.path)
        self.saved = {
            value["index"]: value
            for value in values
            if isinstance(value, dict) and value.get("checkpoint") == self.VERSION
            and isinstance(value.get("index"), int) and isinstance(value.get("metrics"), dict)
        }
        self._file: IO[str] | None = None

    def reusable(self, index: int, fingerprint: str) -> dict[str, dict[str, Any]]:
        """The saved results (JSON, by metric key) that the sample at ``index`` may keep."""
        line = self.saved.get(index)
        if line is None or line.get("fingerprint") != fingerprint:
            return {}
        kept = {}
        for key, entry in line["metrics"].items():
            result = entry.get("result") if isinstance(entry, dict) else None
            if (
                isinstance(result, dict)
                and key in self.signatures
                and entry.get("signature") == self.signatures[key]
                and (self.keep_degraded or not result.get("excluded"))
            ):
                kept[key] = result
        return kept

    def append(self, index: int, fingerprint: str, outcomes: Mapping[str, Any]) -> None:
        """Save one finished sample (``outcomes``: per key, ``{"result": ...}`` or
        ``{"error": ...}``); flushed and fsynced before it returns."""
        if self._file is None:
            self._file = open_for_append(self.path)
        metrics = {
            key: {"signature": self.signatures.get(key, ""), **outcome}
            for key, outcome in outcomes.items()
        }
        line = {
            "checkpoint": self.VERSION, "index": index, "fingerprint": fingerprint,
            "metrics": metrics,
        }
        append_line(self._file, json_line(line))

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
