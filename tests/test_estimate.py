"""estimate(): a dry run that sends nothing, checked against real runs on the local server.

The five-metric suite over 200 varied samples (en/ru/zh, short and long, repeated
references and a few repeated samples): the estimated requests equal what the server
receives; with the server's own token rule the prompt tokens are within 10 % of what it
reports; a cached rerun is estimated at 0 requests; costs come from the prices.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.caches import InMemoryCache
from support import local_models, write_models_yaml

from langchain_answer_metrics import (
    AnswerCorrectness,
    AspectCritic,
    FactualCorrectness,
    Faithfulness,
    MetricResult,
    SemanticSimilarity,
)
from langchain_answer_metrics.config import Panel, load_config
from langchain_answer_metrics.costs import (
    CostEstimate,
    Price,
    aestimate,
    default_token_count,
    estimate,
)
from langchain_answer_metrics.metrics.base import AnswerMetric
from langchain_answer_metrics.run import runner
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer
from langchain_answer_metrics.testing.prompt_reading import message_text
from langchain_answer_metrics.testing.replies import approx_tokens
from langchain_answer_metrics.testing.scripted import ScriptedEmbeddings

KEY_ENV = "ANSWER_METRICS_TEST_ESTIMATE_KEY"

FACTS = {
    "en": [
        "The Eiffel Tower is in Paris.",
        "It was completed in 1889.",
        "It is about 330 metres tall.",
        "Gustave Eiffel's company designed and built it.",
        "About seven million people visit it every year.",
    ],
    "ru": [
        "Эйфелева башня находится в Париже.",
        "Её достроили в 1889 году.",
        "Её высота около 330 метров.",
        "Её спроектировала компания Густава Эйфеля.",
        "Каждый год её посещают около семи миллионов человек.",
    ],
    "zh": [
        "埃菲尔铁塔位于巴黎。",
        "它于1889年建成。",
        "它高约330米。",
        "它由古斯塔夫·埃菲尔的公司设计建造。",
        "每年约有七百万人参观。",
    ],
}
NOTES = {
    "en": "Sample {i} adds that the visitor counted {i} steps on the stairs.",
    "ru": "Образец {i} добавляет, что посетитель насчитал {i} ступенек.",
    "zh": "第{i}号样本补充说游客数了{i}级台阶。",
}


def make_samples(count: int = 200) -> list[dict[str, Any]]:
    """Varied samples: three languages, short and long responses (a long one every
    seventh), references repeated across samples, and every 25th sample a repeat."""
    samples: list[dict[str, Any]] = []
    for i in range(count):
        if i % 25 == 24:
            samples.append(dict(samples[i - 7]))
            continue
        language = ("en", "ru", "zh")[i % 3]
        facts = FACTS[language]
        chosen = [facts[(i + k) % len(facts)] for k in range(1 + i % 3)]
        if i % 7 == 0:
            chosen = chosen + facts * 6  # long: about 30 sentences
        response = " ".join([*chosen, NOTES[language].format(i=i)])
        samples.append(
            {
                "user_input": f"Tell me about the Eiffel Tower ({language}, {i}).",
                "response": response,
                "reference": " ".join(facts[: 2 + i % 4]),
                "retrieved_contexts": [" ".join(facts), NOTES[language].format(i=i % 11)],
            }
        )
    return samples


SAMPLES = make_samples()


def server_rule(text: str) -> int:
    """How the local server counts tokens (testing/replies.py)."""
    return approx_tokens(text)


def server_prompt_tokens(server: LocalOpenAIServer) -> tuple[int, int]:
    """(chat, embedding) prompt tokens the server reported, recomputed from its log by
    the rule its replies follow: per message ``max(1, len // 4) + 4``; per input text."""
    chat = embedding = 0
    for entry in server.requests:
        if entry.status != 200 or entry.body is None:
            continue
        if "messages" in entry.body:
            chat += sum(approx_tokens(message_text(m)) + 4 for m in entry.body["messages"])
        else:
            inputs = entry.body["input"]
            texts = [inputs] if isinstance(inputs, str) else inputs
            embedding += sum(approx_tokens(text) for text in texts)
    return chat, embedding


@pytest.fixture(scope="module")
def panel(
    shared_server: LocalOpenAIServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Panel]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(KEY_ENV, "sk-test-estimate-8a1c")
        config = local_models(shared_server, KEY_ENV, temperature=0.7)
        yield load_config(write_models_yaml(tmp_path_factory.mktemp("config"), config))


def five_metrics(panel: Panel) -> list[AnswerMetric]:
    return [
        FactualCorrectness(llm=panel.judges),
        AnswerCorrectness(llm=panel.judges, embeddings=panel.embedders),
        Faithfulness(llm=panel.judges),
        SemanticSimilarity(embeddings=panel.embedders),
        AspectCritic(
            llm=panel.judges,
            name="has_year",
            strictness=3,
            criterion="The response must mention a year.",
        ),
    ]


def within(estimated: int, actual: int, tolerance: float = 0.10) -> bool:
    return abs(estimated - actual) <= tolerance * actual


@pytest.mark.slow  # estimates and real runs of 200 samples
@pytest.mark.usefixtures("network_attempts")
def test_estimate_matches_a_real_run_on_the_local_server(
    server: LocalOpenAIServer, panel: Panel
) -> None:
    metrics = five_metrics(panel)
    plan = estimate(SAMPLES, metrics, token_counter=server_rule, count_schema=False)
    assert server.requests == []  # the estimate sent nothing

    rows = runner.evaluate(SAMPLES, metrics)
    assert all(not row.errors for row in rows)
    judge, embedder = plan.models["judge-a"], plan.models["embed-a"]
    assert (judge.kind, embedder.kind) == ("chat", "embedding")
    assert judge.requests == server.chat_requests
    assert embedder.requests == server.embedding_requests
    assert plan.total.requests == server.chat_requests + server.embedding_requests
    assert plan.samples == len(SAMPLES) and plan.dry_run_errors == 0

    chat_tokens, embedding_tokens = server_prompt_tokens(server)
    assert within(judge.prompt_tokens, chat_tokens), (judge.prompt_tokens, chat_tokens)
    assert embedder.prompt_tokens == embedding_tokens  # the same texts, the same rule
    # The server's usage as the results report it agrees with its log.
    reported = sum(
        usage.input_tokens
        for row in rows
        for outcome in row.results.values()
        if isinstance(outcome, MetricResult)
        for label, usage in outcome.usage.items()
        if label == "judge-a"
    )
    assert reported == chat_tokens
    # Completions: a range, and the server's actual count falls in it for these replies.
    completion = sum(
        usage.output_tokens
        for row in rows
        for outcome in row.results.values()
        if isinstance(outcome, MetricResult)
        for label, usage in outcome.usage.items()
        if label == "judge-a"
    )
    assert judge.completion_tokens_low <= completion <= judge.completion_tokens_high
    assert embedder.completion_tokens_high == 0


@pytest.mark.slow  # estimates and real runs of 200 samples
@pytest.mark.usefixtures("network_attempts")
def test_a_cached_rerun_is_estimated_at_no_request(
    server: LocalOpenAIServer, panel: Panel, llm_cache: InMemoryCache
) -> None:
    metrics = five_metrics(panel)
    half = SAMPLES[:60]
    runner.evaluate(half, metrics)
    entries = dict(llm_cache._cache)
    server.reset()

    rerun = estimate(half, metrics)
    assert rerun.total.requests == 0
    assert rerun.models["judge-a"].cached > 0 and rerun.models["embed-a"].cached > 0
    assert rerun.total.prompt_tokens == 0
    assert dict(llm_cache._cache) == entries  # the dry run wrote nothing to the cache

    # Half cached: the estimate of the whole set is what the real run then sends.
    more = SAMPLES[:120]
    plan = estimate(more, metrics)
    assert server.requests == []
    runner.evaluate(more, metrics)
    assert plan.models["judge-a"].requests == server.chat_requests > 0
    assert plan.models["embed-a"].requests == server.embedding_requests


@pytest.mark.usefixtures("network_attempts")
def test_costs_come_from_the_prices(server: LocalOpenAIServer, panel: Panel) -> None:
    metrics = five_metrics(panel)[:4]
    samples = SAMPLES[:30]
    unpriced = estimate(samples, metrics)
    assert unpriced.models["judge-a"].cost_low is None
    assert unpriced.total.cost_low is None and unpriced.total.cost_high is None

    prices = {
        "judge-a": Price(input_per_million=2.0, output_per_million=8.0),
        "embed-a": Price(input_per_million=0.1),
    }
    plan = estimate(samples, metrics, prices=prices)
    judge, embedder = plan.models["judge-a"], plan.models["embed-a"]
    assert judge.cost_low == pytest.approx(
        (judge.prompt_tokens * 2.0 + judge.completion_tokens_low * 8.0) / 1e6
    )
    assert judge.cost_high == pytest.approx(
        (judge.prompt_tokens * 2.0 + judge.completion_tokens_high * 8.0) / 1e6
    )
    assert (
        embedder.cost_low == embedder.cost_high == pytest.approx(embedder.prompt_tokens * 0.1 / 1e6)
    )
    assert plan.total.cost_low == pytest.approx(judge.cost_low + embedder.cost_low)
    assert judge.price == prices["judge-a"]

    # Only the judge priced: no total cost (it would understate), the judge's own stands.
    partial = estimate(samples, metrics, prices={"judge-a": prices["judge-a"]})
    assert partial.models["judge-a"].cost_low == judge.cost_low
    assert partial.total.cost_low is None

    dumped = plan.as_dict()
    assert set(dumped) == {"judge-a", "embed-a", "total"}
    assert set(dumped["judge-a"]) >= {
        "requests",
        "prompt_tokens",
        "completion_tokens_low",
        "completion_tokens_high",
        "cost_low",
        "cost_high",
    }
    assert CostEstimate.model_validate_json(plan.model_dump_json()) == plan
    assert server.requests == []


@pytest.mark.slow  # estimates of the whole varied set
@pytest.mark.usefixtures("network_attempts")
def test_async_estimate_and_token_counters(server: LocalOpenAIServer, panel: Panel) -> None:
    metrics = five_metrics(panel)
    samples = SAMPLES[:20]
    sync_plan = estimate(samples, metrics)
    async_plan = asyncio.run(aestimate(samples, metrics))
    assert async_plan == sync_plan

    class Tokenizer:  # a tokenizer with encode(): one token per character
        def encode(self, text: str) -> list[int]:
            return [ord(c) for c in text]

    by_chars = estimate(samples, metrics, token_counter=Tokenizer())
    by_default = estimate(samples, metrics)
    assert by_chars.total.requests == by_default.total.requests
    assert by_chars.total.prompt_tokens > 2 * by_default.total.prompt_tokens
    # The schema a request sends is counted by default.
    without_schema = estimate(samples, metrics, count_schema=False)
    assert without_schema.total.prompt_tokens < by_default.total.prompt_tokens
    assert server.requests == []

    with pytest.raises(TypeError, match="token_counter"):
        estimate(samples, metrics, token_counter=42)
    with pytest.raises(Exception, match="budget"):
        estimate(samples, metrics, budget=1.0)


def test_default_token_count() -> None:
    assert default_token_count("") == 0
    assert default_token_count("abcdefg") == 3  # 7 / 3.0, rounded up
    assert default_token_count("埃菲尔铁塔") == 5  # one per CJK character
    assert default_token_count("Париж") == 2


def chat_openai(server: LocalOpenAIServer, **options: Any) -> Any:
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model="judge-b",
        base_url=server.base_url,
        api_key="sk-test-estimate-8a1c",
        use_responses_api=False,
        max_retries=0,
        **options,
    )


# The fast tier estimates the default method (function_calling: tools, ``n`` for votes);
# the whole suite every method.
@pytest.mark.parametrize(
    "method",
    [
        "function_calling",
        pytest.param("json_schema", marks=pytest.mark.slow),
        pytest.param("json_mode", marks=pytest.mark.slow),
    ],
)
@pytest.mark.usefixtures("network_attempts")
def test_each_structured_method_and_wrapper_is_estimated_exactly(
    server: LocalOpenAIServer, panel: Panel, method: str, llm_cache: InMemoryCache
) -> None:
    from langchain_answer_metrics import Judge

    # A bound option and fallbacks around the model: the stand-in keeps both.
    wrapped = (
        chat_openai(server, temperature=0.3).bind(seed=7).with_fallbacks([chat_openai(server)])
    )
    judges = [
        Judge(model=wrapped, label="wrapped", method=method),  # type: ignore[arg-type]
        Judge(model=chat_openai(server, temperature=0.9), label="bare", method=method),
    ]
    metrics = [
        FactualCorrectness(llm=judges),
        Faithfulness(llm=judges),
        AspectCritic(
            llm=judges, name="has_year", strictness=3, criterion="The response must mention a year."
        ),
    ]
    samples = SAMPLES[:24]
    runner.evaluate(samples[:10], metrics)  # some cached already
    server.reset()
    plan = estimate(samples, metrics, token_counter=server_rule, count_schema=False)
    assert server.requests == []
    runner.evaluate(samples, metrics)
    sent = {
        label: sum(1 for e in server.requests if e.body and e.body.get("temperature") == t)
        for label, t in (("wrapped", 0.3), ("bare", 0.9))
    }
    assert {label: plan.models[label].requests for label in sent} == sent
    assert plan.models["wrapped"].cached > 0
    chat_tokens, _ = server_prompt_tokens(server)
    assert within(plan.total.prompt_tokens, chat_tokens)


def test_prices_lookup_and_overrides() -> None:
    from langchain_answer_metrics.core.prices import BUILTIN_PRICES, PRICES_TAKEN, price_for

    assert PRICES_TAKEN and BUILTIN_PRICES["gpt-4o-mini"].output_per_million > 0
    mini = BUILTIN_PRICES["gpt-4o-mini"]
    assert price_for("gpt-4o-mini") == mini
    assert price_for("gpt-4o-mini-2024-07-18") == mini  # dated variant
    assert price_for("openai/gpt-4o-mini") == mini  # provider prefix
    assert price_for("gpt-3.5-turbo-0125") == BUILTIN_PRICES["gpt-3.5-turbo"]
    assert price_for("gpt-4o-mini-tts") is None  # no loose prefix matching
    assert price_for("judge-a") is None
    assert BUILTIN_PRICES["text-embedding-3-small"].output_per_million == 0.0

    own = Price(input_per_million=9.0, output_per_million=1.0)
    # A label first, then the model id; the user's prices before the built-in table.
    assert price_for("my-judge", "gpt-4o-mini", prices={"my-judge": own}) == own
    assert price_for("my-judge", "gpt-4o-mini", prices={"gpt-4o-mini": own}) == own
    assert price_for("my-judge", "gpt-4o-mini") == mini
    assert price_for("gpt-4o-mini", builtin=False) is None
    assert own.cost(1_000_000, 500_000) == pytest.approx(9.5)
    with pytest.raises(ValueError):
        Price(input_per_million=-1.0)
    with pytest.raises(ValueError):
        Price(input_per_million=1.0, output=2.0)  # type: ignore[call-arg]


@pytest.mark.usefixtures("network_attempts")
def test_model_ids_are_priced_from_the_builtin_table(server: LocalOpenAIServer) -> None:
    from langchain_openai import ChatOpenAI, OpenAIEmbeddings

    from langchain_answer_metrics.core.prices import BUILTIN_PRICES

    # At OpenAI's own endpoint (the estimate sends nothing), where its list prices apply.
    judge = ChatOpenAI(model="gpt-4o-mini-2024-07-18", api_key="sk-test-x", use_responses_api=False)  # type: ignore[call-arg]
    embedder = OpenAIEmbeddings(
        model="text-embedding-3-small", api_key="sk-test-x", check_embedding_ctx_length=False
    )  # type: ignore[call-arg]
    plan = estimate(
        SAMPLES[:5], [FactualCorrectness(llm=judge), SemanticSimilarity(embeddings=embedder)]
    )
    chat, vectors = plan.models["gpt-4o-mini-2024-07-18"], plan.models["text-embedding-3-small"]
    assert chat.price == BUILTIN_PRICES["gpt-4o-mini"] and chat.cost_high is not None
    assert vectors.price == BUILTIN_PRICES["text-embedding-3-small"]
    assert plan.total.cost_low == pytest.approx(chat.cost_low + vectors.cost_low)  # type: ignore[operator]
    assert server.requests == []


def test_a_model_served_on_this_machine_has_no_builtin_price(server: LocalOpenAIServer) -> None:
    """The toy judge (or a local model) named gpt-4o-mini is not priced as gpt-4o-mini
    (issue 30 §6): the built-in list prices are a provider's own; given prices still apply."""
    from langchain_openai import OpenAIEmbeddings

    judge = chat_openai(server).model_copy(update={"model_name": "gpt-4o-mini"})
    embedder = OpenAIEmbeddings(
        model="text-embedding-3-small",
        base_url=server.base_url.replace("127.0.0.1", "localhost"),
        api_key="sk-test-x",
        check_embedding_ctx_length=False,
    )
    metrics = [FactualCorrectness(llm=judge), SemanticSimilarity(embeddings=embedder)]
    plan = estimate(SAMPLES[:3], metrics)
    for label in ("gpt-4o-mini", "text-embedding-3-small"):
        assert plan.models[label].price is None and plan.models[label].cost_high is None
    assert plan.models["gpt-4o-mini"].requests > 0 and plan.total.cost_high is None
    given = estimate(SAMPLES[:3], metrics, prices={"gpt-4o-mini": Price(input_per_million=1.0)})
    assert given.models["gpt-4o-mini"].cost_high is not None


def test_any_chat_model_with_tools_is_estimated_exactly() -> None:
    """A chat model of another family (its own bind_tools, no ``n``): the same count."""
    from support import fact_judge

    from langchain_answer_metrics.testing.scripted import ScriptedEmbeddings

    judge, embeddings = fact_judge("scripted-judge"), ScriptedEmbeddings()
    metrics = [
        FactualCorrectness(llm=judge),
        AnswerCorrectness(llm=judge, embeddings=embeddings),
        Faithfulness(llm=judge),
        SemanticSimilarity(embeddings=embeddings),
        AspectCritic(llm=judge, name="has_year", strictness=3, criterion="It has a year."),
    ]
    samples = SAMPLES[:40]
    plan = estimate(samples, metrics)
    assert judge.calls == [] and embeddings.requests == []
    runner.evaluate(samples, metrics)
    assert plan.models["scripted-judge"].requests == len(judge.calls)
    assert plan.models["scripted-embeddings"].requests == len(embeddings.requests)
    distinct = len({(s["user_input"], s["response"]) for s in samples})
    assert judge.calls_for("AspectVerdict") == 3 * distinct  # no n: one request a vote


def test_the_dry_run_is_never_traced(
    monkeypatch: pytest.MonkeyPatch, network_attempts: list[Any]
) -> None:
    from support import fact_judge

    monkeypatch.setenv("LANGSMITH_TRACING", "true")
    monkeypatch.setenv("LANGSMITH_API_KEY", "lsv2-test-never-sent")
    judge = fact_judge("scripted-judge")
    plan = estimate(SAMPLES[:3], [FactualCorrectness(llm=judge)])
    assert plan.total.requests > 0
    assert network_attempts == []


def test_a_model_built_per_call_is_estimated_like_a_plain_one(server: LocalOpenAIServer) -> None:
    from langchain.chat_models import init_chat_model

    configurable = init_chat_model(
        "gpt-4o-mini",
        model_provider="openai",
        configurable_fields=("temperature",),
        base_url=server.base_url,
        api_key="sk-test-estimate-8a1c",
        use_responses_api=False,
    )
    plain = chat_openai(server).model_copy(update={"model_name": "gpt-4o-mini"})
    samples = SAMPLES[:12]

    def plan_for(llm: Any) -> CostEstimate:
        metrics = [FactualCorrectness(llm=llm), Faithfulness(llm=llm)]
        return estimate(samples, metrics, prices={"gpt-4o-mini": Price(input_per_million=1.0)})

    built, given = plan_for(configurable), plan_for(plain)
    assert built.models["gpt-4o-mini"].requests == given.models["gpt-4o-mini"].requests > 0
    assert built.total.cost_high is not None
    assert server.requests == []


def test_answer_correctness_with_configured_components() -> None:
    from support import fact_judge

    from langchain_answer_metrics.testing.scripted import ScriptedEmbeddings

    own, shared = fact_judge("own-judge"), fact_judge("shared-judge")
    embeddings = ScriptedEmbeddings(model="own-embeddings")
    metrics = [
        FactualCorrectness(llm=shared),
        AnswerCorrectness(
            factual=FactualCorrectness(llm=own), semantic=SemanticSimilarity(embeddings=embeddings)
        ),
    ]
    samples = SAMPLES[:20]
    plan = estimate(samples, metrics)
    assert own.calls == shared.calls == embeddings.requests == []
    runner.evaluate(samples, metrics)
    assert plan.models["own-judge"].requests == len(own.calls) > 0
    assert plan.models["shared-judge"].requests == len(shared.calls) > 0
    assert plan.models["own-embeddings"].requests == len(embeddings.requests) > 0


def test_a_model_the_dry_run_cannot_replace_is_refused() -> None:
    from support import fact_judge

    from langchain_answer_metrics import Judge

    class WithASecondJudge(FactualCorrectness):
        referee: Judge | None = None

    judge = fact_judge("scripted-judge")
    metric = WithASecondJudge(llm=judge, referee=Judge(model=fact_judge("referee")))
    with pytest.raises(TypeError, match=r"WithASecondJudge\.referee"):
        estimate(SAMPLES[:2], [metric])
    assert judge.calls == []


class WordTokenEmbeddings(ScriptedEmbeddings):
    """An embedding model with its own offline tokenizer: one token per word."""

    def count_tokens(self, text: str) -> int:
        return len(text.split())


def test_an_embedding_models_own_tokenizer_counts_and_chunks_as_in_the_run() -> None:
    # Long texts are chunked by the model's tokenizer (here words, far from the default
    # estimate): the dry run must cut them the same way to foresee the same requests.
    words = " ".join(f"word{i}." for i in range(300))
    samples = [{"response": words, "reference": f"short {i}"} for i in range(5)]
    model = WordTokenEmbeddings()
    metrics = [SemanticSimilarity(embeddings=model, max_tokens=40)]
    plan = estimate(samples, metrics)
    rows = runner.evaluate(samples, metrics)
    sent = [text for request in model.requests for text in request]
    assert plan.models["scripted-embeddings"].requests == len(model.requests)
    assert plan.models["scripted-embeddings"].prompt_tokens == sum(map(model.count_tokens, sent))
    used = sum(
        row.results["semantic_similarity"].usage["scripted-embeddings"].input_tokens for row in rows
    )
    assert used == plan.models["scripted-embeddings"].prompt_tokens
