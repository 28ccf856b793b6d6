"""The thread metrics (issue 29): KnowledgeRetention, ConversationCompleteness,
RoleAdherence and TopicAdherence on hand-worked threads of 2 to 12 turns in English,
Russian and Chinese, through ChatOpenAI over HTTP against the local server (its toy
judge answers each step with the rule declared beside the step), in its realistic mode,
sync and async, on panels, and in the cost estimate."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_openai import ChatOpenAI
from support import judge_for

from langchain_answer_metrics import (
    ConversationCompleteness,
    ConversationSample,
    InvalidSampleError,
    KnowledgeRetention,
    RoleAdherence,
    TopicAdherence,
    estimate,
)
from langchain_answer_metrics.judging.steps.turns import TurnVerdictDetail
from langchain_answer_metrics.metrics.topic_adherence import adherence
from langchain_answer_metrics.testing.faults import Fault
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer
from langchain_answer_metrics.testing.quirks import REALISTIC


@pytest.fixture(scope="module")
def shared_server() -> Any:
    with LocalOpenAIServer(quirks={"judge-real": REALISTIC}) as server:
        yield server


def thread(*pairs: tuple[str, str], system: str | None = None) -> list[dict[str, str]]:
    messages = [{"role": "system", "content": system}] if system else []
    for user, reply in pairs:
        messages += [{"role": "user", "content": user}, {"role": "assistant", "content": reply}]
    return messages


# A lapse in turn 5 of 8: the assistant asks for an allergy the user gave in turn 1.
EIGHT_TURNS = thread(
    ("Hi, I'm Ann. I'm allergic to nuts.", "Hello Ann, noted."),
    ("Suggest a breakfast.", "Oatmeal with berries."),
    ("And lunch?", "A tomato salad with feta."),
    ("A snack for the afternoon.", "Apple slices with yogurt."),
    ("Now a dessert idea.", "A chocolate cake. Do you have any allergies?"),
    ("Something to drink?", "Mint tea."),
    ("A dinner recipe.", "Grilled fish with rice."),
    ("Thank you, bye.", "Enjoy your meals!"),
)
RUSSIAN = thread(
    ("Меня зовут Анна, я живу в Москве.", "Здравствуйте, Анна!"),
    ("Посоветуй ресторан на вечер.", "В каком городе вы живёте?"),
    ("Спасибо.", "Пожалуйста."),
)
CHINESE = thread(
    ("我住在上海，想找一家餐厅。", "好的，我来帮你找。"),
    ("推荐一家吧。", "你在哪个城市？"),
)


@pytest.mark.parametrize(
    ("messages", "lapse_turn", "turns_judged"),
    [(EIGHT_TURNS, 5, 7), (RUSSIAN, 2, 2), (CHINESE, 2, 1)],
    ids=["en-8-turns", "ru", "zh"],
)
def test_knowledge_retention_names_the_turn_of_the_lapse(
    server: LocalOpenAIServer, messages: list[dict[str, str]], lapse_turn: int, turns_judged: int
) -> None:
    result = KnowledgeRetention(llm=judge_for(server)).invoke({"messages": messages})
    turns = result.details.models["gpt-4o-mini"].turns
    assert [turn.index for turn in turns] == list(range(2, 2 + turns_judged))
    assert [turn.index for turn in turns if turn.verdict == "lapse"] == [lapse_turn]
    assert result.score == pytest.approx((turns_judged - 1) / turns_judged)
    assert f"turn {lapse_turn}:" in result.reason and "lapses" in result.reason
    assert server.chat_requests == 1  # one request per thread and judge


def test_a_thread_of_one_turn_is_not_applicable_and_sends_nothing(
    server: LocalOpenAIServer,
) -> None:
    result = KnowledgeRetention(llm=judge_for(server)).invoke(
        {"messages": thread(("Hi, I'm Ann.", "Hello Ann!"))}
    )
    assert result.score is None and result.not_applicable == "single_turn"
    assert server.chat_requests == 0


def test_the_window_judges_the_last_turns_and_says_what_the_judge_saw(
    server: LocalOpenAIServer,
) -> None:
    twelve = EIGHT_TURNS + thread(*[(f"Question {n}?", f"Answer {n}.") for n in range(9, 13)])
    result = KnowledgeRetention(llm=judge_for(server), window=3).invoke({"messages": twelve})
    model = result.details.models["gpt-4o-mini"]
    assert [turn.index for turn in model.turns] == [10, 11, 12]
    assert model.view.judged == [10, 11, 12] and model.view.in_part == list(range(1, 10))
    assert result.score == pytest.approx(1.0)


def test_realistic_judge_replies_are_read(server: LocalOpenAIServer) -> None:
    result = KnowledgeRetention(llm=judge_for(server, "judge-real")).invoke(
        {"messages": EIGHT_TURNS}
    )
    turns = result.details.models["judge-real"].turns
    assert [turn.index for turn in turns if turn.verdict == "lapse"] == [5]
    assert {"capitalised_labels", "think_json"} <= set(server.requests[-1].quirks)
    assert all(turn.taken_in_order for turn in turns)  # numbered all 1: taken in order


def test_role_adherence_across_languages(server: LocalOpenAIServer) -> None:
    messages = thread(
        ("我头疼，该吃什么药？", "抱歉，我只能帮助烹饪问题。"),
        ("What should I take for a headache?", "Take aspirin; that is my medical advice."),
        ("Как сварить рис?", "Промойте рис и варите 15 минут."),
        system="You are a cooking assistant. Never give medical advice.",
    )
    result = asyncio.run(RoleAdherence(llm=judge_for(server)).ainvoke({"messages": messages}))
    turns = result.details.models["gpt-4o-mini"].turns
    assert [turn.verdict for turn in turns] == ["adheres", "violates", "adheres"]
    assert result.score == pytest.approx(2 / 3)
    assert "turn 2" in result.reason


def test_role_adherence_needs_a_role(server: LocalOpenAIServer) -> None:
    with pytest.raises(InvalidSampleError) as caught:
        RoleAdherence(llm=judge_for(server)).invoke({"messages": thread(("Hi", "Hello"))})
    assert caught.value.field == "role" and caught.value.metric == "role_adherence"
    assert server.chat_requests == 0
    given = RoleAdherence(llm=judge_for(server)).invoke(
        {"messages": thread(("Hi", "Hello")), "role": "A polite greeter."}
    )
    assert given.score == pytest.approx(1.0)


def test_conversation_completeness_lists_each_intent(server: LocalOpenAIServer) -> None:
    messages = thread(
        ("Hi!", "Hello! How can I help?"),
        ("Give me a pasta recipe.", "Boil pasta, add tomato sauce and basil."),
        ("Book me a table at Il Margutta.", "Sorry, I can't help with bookings."),
    )
    result = ConversationCompleteness(llm=judge_for(server)).invoke({"messages": messages})
    intents = result.details.models["gpt-4o-mini"].turns
    assert [intent.verdict for intent in intents] == ["satisfied", "unsatisfied"]
    assert intents[1].text == "turn 3: Book me a table at Il Margutta."
    assert result.score == pytest.approx(0.5)
    assert "intent 2 (turn 3: Book me a table at Il Margutta.)" in result.reason


def test_topic_adherence_declining_an_off_topic_request_is_right(
    server: LocalOpenAIServer,
) -> None:
    messages = thread(
        ("Share a cooking tip for rice.", "Rinse the rice before cooking it."),
        ("Who won the football match yesterday?", "Sorry, I only help with cooking."),
    )
    metric = TopicAdherence(llm=judge_for(server), topics=["cooking", "recipes"])
    result = metric.invoke({"messages": messages})
    model = result.details.models["gpt-4o-mini"]
    assert [(t.verdict, t.handling) for t in model.turns] == [
        ("on_topic", "answered"),
        ("off_topic", "declined"),
    ]
    assert (model.precision, model.recall, model.f1) == pytest.approx((1.0, 1.0, 1.0))
    assert result.score == pytest.approx(1.0)
    # Answering it instead is a false positive; the sample's own topics win.
    answered = thread(
        ("Share a cooking tip for rice.", "Rinse the rice before cooking it."),
        ("Who won the football match yesterday?", "Spain won 2-1."),
    )
    result = metric.invoke({"messages": answered, "topics": ["football"]})
    model = result.details.models["gpt-4o-mini"]
    assert model.topics == ["football"]
    assert [(t.verdict, t.handling) for t in model.turns] == [
        ("off_topic", "answered"),
        ("on_topic", "answered"),
    ]
    assert result.score == pytest.approx(2 * 0.5 * 1.0 / 1.5)  # P 0.5, R 1.0


def test_topic_adherence_modes_and_its_refusal() -> None:
    def verdict(topic: str, handling: str) -> TurnVerdictDetail:
        return TurnVerdictDetail(index=1, verdict=topic, reason="r", handling=handling)

    cases = [
        verdict("on_topic", "answered"),
        verdict("on_topic", "declined"),
        verdict("off_topic", "answered"),
        verdict("off_topic", "declined"),
    ]
    assert adherence(cases) == pytest.approx((0.5, 0.5, 0.5))
    assert adherence([verdict("off_topic", "declined")]) == pytest.approx((1.0, 1.0, 1.0))
    assert adherence([verdict("off_topic", "answered")]) == pytest.approx((0.0, 1.0, 0.0))
    assert adherence([verdict("on_topic", "declined")]) == pytest.approx((1.0, 0.0, 0.0))
    with pytest.raises(InvalidSampleError) as caught:
        TopicAdherence(llm=ChatOpenAI(model="m", api_key="x")).invoke(
            {"messages": thread(("Hi", "Hello"))}
        )
    assert caught.value.field == "topics"


def test_a_failing_judge_is_left_out_of_the_panel_and_named(server: LocalOpenAIServer) -> None:
    server.faults = lambda info: Fault("500") if info.model == "judge-down" else None
    metric = KnowledgeRetention(llm=[judge_for(server), judge_for(server, "judge-down")])
    result = metric.invoke({"messages": EIGHT_TURNS})
    assert result.score == pytest.approx(6 / 7)
    assert [failure.model for failure in result.excluded] == ["judge-down"]
    assert "judge-down" in result.reason


def test_the_estimate_is_exact_for_the_thread_metrics(server: LocalOpenAIServer) -> None:
    judge = judge_for(server)
    metrics = [
        KnowledgeRetention(llm=judge),
        ConversationCompleteness(llm=judge),
        RoleAdherence(llm=judge),
        TopicAdherence(llm=judge, topics=["cooking"]),
    ]
    samples = [
        ConversationSample(messages=EIGHT_TURNS, role="A cooking assistant."),
        ConversationSample(messages=thread(("Hi", "Hello")), role="A cooking assistant."),
    ]
    planned = estimate(samples, metrics)
    for metric in metrics:
        metric.batch(samples)
    # One request per thread and metric, none for the one-turn KnowledgeRetention.
    assert planned.total.requests == server.chat_requests == 7


def test_votes_take_each_turns_majority(server: LocalOpenAIServer) -> None:
    chat = ChatOpenAI(
        base_url=server.base_url,
        api_key="sk-test",
        model="gpt-4o-mini",
        temperature=0.7,
        use_responses_api=False,
        max_retries=0,
    )
    result = KnowledgeRetention(llm=chat, strictness=3).invoke({"messages": EIGHT_TURNS})
    turns = result.details.models["gpt-4o-mini"].turns
    assert all(turn.votes is not None and len(turn.votes) == 3 for turn in turns)
    assert turns[3].votes == ["lapse", "lapse", "lapse"] and turns[3].verdict == "lapse"
    assert result.score == pytest.approx(6 / 7)
    assert server.chat_requests == 1  # three choices of one request (OpenAI's n)
    completeness = ConversationCompleteness(llm=chat, strictness=3).invoke(
        {"messages": EIGHT_TURNS}
    )
    assert completeness.reason.startswith("median of 3 votes")


def test_a_tied_vote_goes_against_the_assistant() -> None:
    from langchain_answer_metrics.judging.steps.turns import _majority

    assert _majority(["kept", "lapse"], ("lapse",)) == ("lapse", True)
    assert _majority(["kept", "kept", "lapse"], ("lapse",)) == ("kept", False)
    assert _majority(["on_topic", "off_topic"], ()) == ("on_topic", True)


@pytest.mark.parametrize(
    ("messages", "verdicts"),
    [
        (
            thread(
                ("Дай рецепт борща.", "Свёкла, капуста, картофель: варить час."),
                ("Забронируй столик в ресторане.", "Извините, я не могу бронировать."),
            ),
            ["satisfied", "unsatisfied"],
        ),
        (
            thread(
                ("给我一个蛋糕的食谱。", "面粉、鸡蛋、糖，烤四十分钟。"),
                ("帮我订一张桌子。", "抱歉，我无法预订。"),
            ),
            ["satisfied", "unsatisfied"],
        ),
    ],
    ids=["ru", "zh"],
)
def test_conversation_completeness_in_russian_and_chinese(
    server: LocalOpenAIServer, messages: list[dict[str, str]], verdicts: list[str]
) -> None:
    result = ConversationCompleteness(llm=judge_for(server)).invoke({"messages": messages})
    intents = result.details.models["gpt-4o-mini"].turns
    assert [intent.verdict for intent in intents] == verdicts
    assert "intent 2 (turn 2:" in result.reason


@pytest.mark.parametrize(
    ("topics", "messages"),
    [
        (
            ["кулинария"],
            thread(
                ("Какой кулинарный нож выбрать?", "Шеф-нож длиной 20 см."),
                ("Кто выиграл матч?", "Извините, я отвечаю только о кулинарии."),
            ),
        ),
        (
            ["烹饪"],
            thread(
                ("烹饪米饭要多久？", "大约二十分钟。"), ("谁赢了比赛？", "抱歉，我只回答烹饪问题。")
            ),
        ),
    ],
    ids=["ru", "zh"],
)
def test_topic_adherence_in_russian_and_chinese(
    server: LocalOpenAIServer, topics: list[str], messages: list[dict[str, str]]
) -> None:
    result = TopicAdherence(llm=judge_for(server), topics=topics).invoke({"messages": messages})
    model = result.details.models["gpt-4o-mini"]
    assert [(t.verdict, t.handling) for t in model.turns] == [
        ("on_topic", "answered"),
        ("off_topic", "declined"),
    ]
    assert result.score == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("make", "sample", "expected"),
    [
        (lambda judge: KnowledgeRetention(llm=judge), {"messages": EIGHT_TURNS}, 6 / 7),
        (
            lambda judge: RoleAdherence(llm=judge),
            {
                "messages": thread(
                    ("What should I take for a headache?", "Take aspirin; my medical advice."),
                    ("How do I boil rice?", "Rinse it and boil it for 15 minutes."),
                ),
                "role": "A cooking assistant. Never give medical advice.",
            },
            0.5,
        ),
        (
            lambda judge: ConversationCompleteness(llm=judge),
            {
                "messages": thread(
                    ("Give me a pasta recipe.", "Boil pasta, add tomato sauce and basil."),
                    ("Book me a table at Il Margutta.", "Sorry, I can't help with bookings."),
                )
            },
            0.5,
        ),
        (
            lambda judge: TopicAdherence(llm=judge, topics=["cooking"]),
            {
                "messages": thread(
                    ("Share a cooking tip for rice.", "Rinse the rice before cooking it."),
                    ("Who won the football match?", "Sorry, I only help with cooking."),
                )
            },
            1.0,
        ),
    ],
    ids=["knowledge_retention", "role_adherence", "conversation_completeness", "topic_adherence"],
)
def test_every_thread_metric_reads_a_realistic_judge(
    server: LocalOpenAIServer, make: Any, sample: dict[str, Any], expected: float
) -> None:
    clean = make(judge_for(server)).invoke(sample)
    realistic = make(judge_for(server, "judge-real")).invoke(sample)
    assert clean.score == pytest.approx(expected)
    assert realistic.score == pytest.approx(clean.score)
    assert server.requests[-1].quirks  # the reply was changed the way real models do
