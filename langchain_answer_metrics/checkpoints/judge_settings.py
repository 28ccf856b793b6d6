"""What a metric's judges are, as a resume compares them: each model's id and the
settings it is asked with (temperature, max_tokens, top_p, seed, reasoning effort ...).

A saved score is reused only when the judges that would score it now are the judges that
scored it. Their labels alone cannot say so: the command's ``--model gpt-4o-mini`` judges
at temperature 0, a ``ChatOpenAI(model="gpt-4o-mini")`` at the provider's default, and a
label may be a name (``label="fast"``) over any model. So a judge is read through
LangChain's own account of what identifies a chat model (``_identifying_params``: its
model id and the parameters its requests carry, never its key, headers or client) plus the
arguments a wrapper binds (``llm.bind(temperature=0)``); an embedding model by its model id
and ``dimensions``.

Left out on purpose: where the requests go (the base URL: the same model behind a proxy,
a gateway or a local server on another port is the same judge) and how they are sent
(streaming, timeouts, retries, rate limits). Nothing named like a credential is kept, and
every text is passed through :func:`~langchain_answer_metrics.core.redaction.redact`.

    >>> judge_settings(Faithfulness(llm=ChatOpenAI(model="gpt-4o-mini", temperature=0)))
    {'gpt-4o-mini': {'model': 'gpt-4o-mini', 'model_name': 'gpt-4o-mini', 'temperature': 0.0}}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import RunnableWithFallbacks
from langchain_core.runnables.base import RunnableBindingBase
from pydantic import BaseModel

from langchain_answer_metrics.core.redaction import is_credential_name, redact
from langchain_answer_metrics.judging.judges import Embedder, Judge
from langchain_answer_metrics.judging.model_facts import optional_attribute, wrapped_model

__all__ = ["judge_settings", "judges_changed_notice", "member_settings"]

# Where and how requests are sent, not what the model is asked: never signed.
_TRANSPORT = frozenset(
    {
        "stream",
        "streaming",
        "stream_usage",
        "base_url",
        "api_base",
        "openai_api_base",
        "azure_endpoint",
        "endpoint",
        "timeout",
        "request_timeout",
        "max_retries",
        "http_client",
        "http_async_client",
        "default_query",
        "openai_proxy",
        "include_response_headers",
    }
)
# What an embedding model's vectors depend on, besides its texts.
_EMBEDDER_FIELDS = ("model", "model_name", "deployment", "dimensions")


def judge_settings(metric: Any) -> dict[str, dict[str, Any]]:
    """Each model of ``metric`` (its judges and embedders, and those of the metrics it
    runs: AnswerCorrectness's parts, a wrapper's metric) by label, with the settings a
    resume compares (:func:`member_settings`)."""
    found: dict[str, dict[str, Any]] = {}
    _collect(metric, found, seen=set())
    return found


def _collect(metric: Any, found: dict[str, dict[str, Any]], *, seen: set[int]) -> None:
    if id(metric) in seen:
        return
    seen.add(id(metric))
    for field in ("llm", "embeddings"):
        for member in optional_attribute(metric, field) or ():
            if isinstance(member, (Judge, Embedder)):
                _add(found, member.label, member_settings(member))
    # The metrics it runs: components (AnswerCorrectness) and a wrapper's metric.
    values = dict(metric) if isinstance(metric, BaseModel) else {}
    inner = optional_attribute(metric, "metric")
    for value in [*values.values(), inner]:
        if isinstance(value, BaseModel) and hasattr(value, "metric_key"):
            _collect(value, found, seen=seen)


def _add(found: dict[str, dict[str, Any]], label: str, settings: dict[str, Any]) -> None:
    # Two parts may share a label with other settings (a component built apart): both kept.
    key, number = label, 1
    while key in found and found[key] != settings:
        number += 1
        key = f"{label}#{number}"
    found[key] = settings


def member_settings(member: Judge | Embedder) -> dict[str, Any]:
    """What a resume compares of one judge or embedder: its model id and the settings its
    requests carry (JSON values, sorted, no credential, no endpoint)."""
    if isinstance(member, Embedder):
        model = wrapped_model(member.model)
        return _plain(
            {name: optional_attribute(model, name) for name in _EMBEDDER_FIELDS},
        )
    runnable = member.model
    bound: dict[str, Any] = {}
    while True:  # the arguments wrappers bind (``bind(temperature=0)``), outermost last
        if isinstance(runnable, RunnableWithFallbacks):
            runnable = runnable.runnable
        elif isinstance(runnable, RunnableBindingBase):
            bound = {**dict(runnable.kwargs or {}), **bound}
            runnable = runnable.bound
        else:
            break
    try:
        identifying = getattr(runnable, "_identifying_params", None)
    except Exception:  # not a LangChain model, or one that cannot say: its class only
        identifying = {}
    settings = {**(identifying if isinstance(identifying, Mapping) else {}), **bound}
    if not settings:
        settings["model"] = type(runnable).__name__
    return _plain(settings)


def _plain(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON-ready settings: no transport, no credential, no empty value."""
    kept: dict[str, Any] = {}
    for name in sorted(settings, key=str):
        if name in _TRANSPORT or is_credential_name(name) or "header" in str(name).lower():
            continue
        value = _json_value(settings[name])
        if value is not None:
            kept[str(name)] = value
    return kept


def _json_value(value: Any) -> Any:
    """``value`` as plain JSON, numbers as floats (``temperature=0`` and ``0.0`` are one
    setting); None for what is not data (a client, a callable) or holds nothing."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        inner = _plain(value)
        return inner or None
    if isinstance(value, (list, tuple)):
        items = [_json_value(item) for item in value]
        return [item for item in items if item is not None] or None
    return None


def judges_changed_notice(
    key: str,
    saved_scores: int | None,
    metric: Any,
    saved_judges: Mapping[str, Mapping[str, Any]] | None = None,
) -> str:
    """What a resume says, before any request, of ``key``'s saved scores whose judges had
    other model ids or settings (``saved_judges``, as a saved record keeps them): what
    differs, that they are scored again, and how to keep them.

        >>> metric = Faithfulness(llm=ChatOpenAI(model="judge-a", temperature=0))
        >>> saved = {"judge-a": {"model": "judge-a", "model_name": "judge-a"}}
        >>> judges_changed_notice("faithfulness", 4, metric, saved)
        'faithfulness: 4 saved scores came from judges with other model ids or settings
        (judge-a: temperature not set → 0): scored again. To keep them, ...'
    """
    now = judge_settings(metric)
    if saved_scores is None:
        scores = "saved scores"
    else:
        scores = f"{saved_scores} saved score{'' if saved_scores == 1 else 's'}"
    if saved_judges:
        differing = "; ".join(_differences(saved_judges, now))
    else:  # a line that signed its judges without keeping them: this run's are named
        differing = "this run's: " + "; ".join(
            f"{label}: {', '.join(f'{name}={_shown(value)}' for name, value in settings.items())}"
            for label, settings in now.items()
        )
    return (
        f"{key}: {scores} came from judges with other model ids or settings ({differing}): "
        "scored again. To keep them, give the judges the settings they were scored with "
        "(the command's --model judges at temperature 0: "
        "ChatOpenAI(model=..., temperature=0) in Python)"
    )


def _differences(
    saved: Mapping[str, Mapping[str, Any]], now: Mapping[str, Mapping[str, Any]]
) -> list[str]:
    """Each judge's settings that differ, as ``label: name saved → now``."""
    lines = []
    for label in dict.fromkeys([*saved, *now]):
        before, after = saved.get(label, {}), now.get(label, {})
        changed = [
            f"{name} {_shown(before.get(name))} → {_shown(after.get(name))}"
            for name in sorted({*before, *after})
            if before.get(name) != after.get(name)
        ]
        if changed:
            lines.append(f"{label}: {', '.join(changed)}")
    return lines


def _shown(value: Any) -> str:
    if value is None:
        return "not set"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))  # as it was given: temperature=0, max_tokens=400
    return str(value)
