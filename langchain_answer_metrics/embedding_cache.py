"""Embedding vectors kept in LangChain's LLM cache, so a rerun sends no embedding request.

LangChain caches chat generations (``set_llm_cache``) but has no global cache for
embeddings. Where the user has set one, vectors are stored in the same cache under a key
naming the embedding model and its settings, so reruns are free for the whole suite:

    >>> from langchain_core.caches import InMemoryCache
    >>> from langchain_core.globals import set_llm_cache
    >>> set_llm_cache(InMemoryCache())   # or SQLiteCache, RedisCache, ...
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.globals import get_llm_cache
from langchain_core.outputs import Generation
from pydantic import BaseModel

_SIMPLE = (str, int, float, bool, type(None))


def cache_identity(model: Any) -> str:
    """The embedding model's class and plain settings (model id, dimensions, base URL...).

    Clients, secrets, private state and other objects are left out: they differ between
    runs, or must not be written anywhere.
    """
    settings: dict[str, Any] = {}
    fields = type(model).model_fields if isinstance(model, BaseModel) else vars(model)
    for name in sorted(fields):
        if name.startswith("_") or "key" in name.lower():
            continue
        value = getattr(model, name, None)
        if isinstance(value, _SIMPLE):
            settings[name] = value
    return json.dumps(
        ["answer-metrics-embedding", type(model).__module__, type(model).__qualname__, settings],
        sort_keys=True,
    )


async def embed_with_cache(
    model: Any,
    texts: list[str],
    send: Callable[[list[str]], Awaitable[list[list[float]]]],
) -> list[list[float]]:
    """Vectors for ``texts``: cached ones from the LLM cache, the rest via ``send``."""
    cache = get_llm_cache()
    if cache is None:
        return await send(texts)
    identity = cache_identity(model)
    found: dict[str, list[float]] = {}
    for text in texts:
        hit = await cache.alookup(text, identity)
        if hit:
            found[text] = json.loads(hit[0].text)
    missing = [text for text in texts if text not in found]
    if missing:
        for text, vector in zip(missing, await send(missing)):
            vector = [float(value) for value in vector]
            found[text] = vector
            await cache.aupdate(text, identity, [Generation(text=json.dumps(vector))])
    return [found[text] for text in texts]
