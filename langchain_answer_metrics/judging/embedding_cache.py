"""Embedding vectors kept in LangChain's LLM cache, so a rerun sends no embedding request.

LangChain caches chat generations (``set_llm_cache``) but has no global cache for
embeddings. Where the user has set one, vectors are stored in the same cache under a key
naming the embedding model and its settings, so reruns are free for the whole suite:

    >>> from langchain_core.caches import InMemoryCache
    >>> from langchain_core.globals import set_llm_cache
    >>> set_llm_cache(InMemoryCache())   # or SQLiteCache, RedisCache, ...
"""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.globals import get_llm_cache
from langchain_core.outputs import Generation
from pydantic import BaseModel, SecretStr

from langchain_answer_metrics.core.redaction import is_credential_name, strip_url_credentials
from langchain_answer_metrics.judging.sync import call_model

_SIMPLE = (str, int, float, bool, type(None))
_LEFT_OUT = object()


def _plain(value: Any, *, top: bool = False) -> Any:
    """``value`` as JSON-ready data for the key, or ``_LEFT_OUT``.

    Nested dicts and lists (``model_kwargs``, ``encode_kwargs``, ``default_headers``,
    ``default_query`` ...) are kept with their credential-named entries dropped; URLs lose
    their ``user:password@``. A top-level object (a client) is left out; a nested one is
    named by its type, so a change of kind still changes the key.
    """
    if isinstance(value, SecretStr):
        return _LEFT_OUT
    if isinstance(value, str):
        return strip_url_credentials(value) if "://" in value else value
    if isinstance(value, _SIMPLE):
        return value
    if isinstance(value, dict):
        items = {
            str(key): _plain(item) for key, item in value.items() if not is_credential_name(key)
        }
        return {key: item for key, item in items.items() if item is not _LEFT_OUT}
    if isinstance(value, (list, tuple, set, frozenset)):
        kept = [item for item in map(_plain, value) if item is not _LEFT_OUT]
        if isinstance(value, (set, frozenset)):
            kept.sort(key=lambda item: json.dumps(item, sort_keys=True))
        return kept
    if top:
        return _LEFT_OUT
    return f"<{type(value).__module__}.{type(value).__qualname__}>"


def cache_identity(model: Any) -> str:
    """The embedding model's class and every setting that changes its vectors: model id,
    dimensions, base URL, and nested settings such as ``model_kwargs``, ``encode_kwargs``,
    ``default_headers`` and ``default_query``, serialised deterministically.

    Clients, private state, secrets (``SecretStr`` values and any setting, header or query
    parameter named like a key, token or authorization) and URL credentials are left
    out: they differ between runs, or must not be written anywhere. The declared fields
    of a pydantic model (every LangChain embedding class) are its settings; of a plain
    object only the simple attributes count, as a list or dict there may be its state
    (a log of requests) rather than a setting.
    """
    settings: dict[str, Any] = {}
    declared = isinstance(model, BaseModel)
    fields = type(model).model_fields if declared else vars(model)
    for name in sorted(fields):
        if name.startswith("_") or is_credential_name(name):
            continue
        value = getattr(model, name, None)
        if not declared and not isinstance(value, _SIMPLE):
            continue
        plain = _plain(value, top=True)
        if plain is not _LEFT_OUT:
            settings[name] = plain
    return json.dumps(
        ["answer-metrics-embedding", type(model).__module__, type(model).__qualname__, settings],
        sort_keys=True,
    )


async def embed_with_cache(
    model: Any,
    texts: list[str],
    send: Callable[[list[str]], Awaitable[list[list[float]]]],
) -> tuple[list[list[float]], int]:
    """Vectors for ``texts``: cached ones from the LLM cache, the rest via ``send`` (one
    call, only if any is missing); and how many came from the cache."""
    cache = get_llm_cache()
    if cache is None:
        return await send(texts), 0
    identity = cache_identity(model)
    found: dict[str, list[float]] = {}
    for text in texts:
        # A cache's async methods may use clients of their own (Redis, SQL): like models,
        # they are reached through their sync interface on the sync surface.
        hit = await call_model(
            functools.partial(cache.lookup, text, identity),
            functools.partial(cache.alookup, text, identity),
        )
        if hit:
            found[text] = json.loads(hit[0].text)
    missing = [text for text in texts if text not in found]
    if missing:
        for text, vector in zip(missing, await send(missing)):
            vector = [float(value) for value in vector]
            found[text] = vector
            entry = [Generation(text=json.dumps(vector))]
            await call_model(
                functools.partial(cache.update, text, identity, entry),
                functools.partial(cache.aupdate, text, identity, entry),
            )
    return [found[text] for text in texts], len(texts) - len(missing)
