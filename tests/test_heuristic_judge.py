"""The toy offline judge: sentence splitting, claim verdicts, aspect rules, prompt parsing."""

from __future__ import annotations

from typing import Any

import pytest

from langchain_answer_metrics.judging import prompts
from langchain_answer_metrics.judging.schemas import AspectVerdict, ClaimList, ClaimVerdicts
from langchain_answer_metrics.testing import heuristic_judge
from langchain_answer_metrics.testing.heuristic_judge import (
    parse_numbered,
    respond,
    split_sentences,
)
from langchain_answer_metrics.testing.prompt_reading import guess_schema
from langchain_answer_metrics.testing.replies import respond_openai_tools


def decompose_messages(text: str, question: str | None = None) -> list[dict[str, Any]]:
    user = prompts.DECOMPOSE_USER.format(
        question=prompts.optional_question(question),
        text=prompts.tag("text", text),
    )
    return [
        {"role": "system", "content": prompts.DECOMPOSE_SYSTEM},
        {"role": "user", "content": user},
    ]


def verify_messages(claims: list[str], source: str) -> list[dict[str, Any]]:
    user = prompts.VERIFY_USER.format(
        count=len(claims),
        question="",
        source=prompts.tag("source", source),
        claims=prompts.tag("claims", prompts.number_claims(claims)),
    )
    return [
        {"role": "system", "content": prompts.VERIFY_SYSTEM},
        {"role": "user", "content": user},
    ]


def aspect_messages(criterion: str, response: str) -> list[dict[str, Any]]:
    user = prompts.ASPECT_USER.format(
        criterion=prompts.tag("criterion", criterion),
        question=prompts.optional_question("What happened?"),
        response=prompts.tag("response", response),
    )
    return [
        {"role": "system", "content": prompts.ASPECT_SYSTEM},
        {"role": "user", "content": user},
    ]


def verdicts(claims: list[str], source: str) -> list[str]:
    result = ClaimVerdicts.model_validate(respond("ClaimVerdicts", verify_messages(claims, source)))
    assert [verdict.index for verdict in result.verdicts] == list(range(1, len(claims) + 1))
    return [verdict.verdict for verdict in result.verdicts]


# ------------------------------------------------------------------------- ClaimList


def test_english_sentences_become_claims() -> None:
    text = "Einstein was born in 1879. He won the Nobel Prize in 1921! Was pi 3.14? Ok."
    result = ClaimList.model_validate(respond("ClaimList", decompose_messages(text, "Who?")))
    assert result.claims == [
        "Einstein was born in 1879.",
        "He won the Nobel Prize in 1921!",
        "Was pi 3.14?",  # no split inside a number; "Ok." is too short to be a claim
    ]


def test_russian_sentences_keep_their_language() -> None:
    text = "Москва — столица России. Она основана в 1147 году! Да."
    assert respond("ClaimList", decompose_messages(text)) == {
        "claims": ["Москва — столица России.", "Она основана в 1147 году!"]
    }


def test_chinese_sentences_split_on_cjk_punctuation() -> None:
    text = "爱因斯坦出生于1879年。他获得了诺贝尔奖！他是物理学家；他很有名？好"
    assert split_sentences(text) == [
        "爱因斯坦出生于1879年。",
        "他获得了诺贝尔奖！",
        "他是物理学家；",
        "他很有名？",
    ]


def test_bullets_and_lines_split_and_blank_text_gives_no_claims() -> None:
    assert split_sentences("- Paris is big\n2. Rome is old\n\n") == ["Paris is big", "Rome is old"]
    assert respond("ClaimList", decompose_messages("   ")) == {"claims": []}


def test_escaped_tags_round_trip() -> None:
    text = "Use <text> and </text> tags carefully. Also a < b holds here."
    messages = decompose_messages(text)
    assert "&lt;/text&gt;" in messages[1]["content"]  # the prompt really escaped it
    assert respond("ClaimList", messages)["claims"] == [
        "Use <text> and </text> tags carefully.",
        "Also a < b holds here.",
    ]


# ------------------------------------------------------------------------- ClaimVerdicts


def test_clear_english_verdicts() -> None:
    assert verdicts(
        ["Einstein was born in 1879.", "Bananas are a yellow fruit."],
        "Einstein was born in Germany in 1879.",
    ) == ["supported", "neutral"]
    assert verdicts(["Einstein was born in Spain."], "Einstein was born in Germany.") == [
        "contradicted"
    ]


def test_numbers_and_negation_contradict() -> None:
    source = "Einstein was born in Germany in 1879."
    assert verdicts(
        ["Einstein was born in Germany in 1880.", "Einstein was not born in Germany."], source
    ) == ["contradicted", "contradicted"]


def test_missing_key_fact_without_alternative_is_neutral() -> None:
    # The source has no year at all, so a year in the claim is unverified, not wrong.
    assert verdicts(["Einstein was born in 1879."], "Einstein was born in Germany.") == ["neutral"]


def test_russian_verdicts_with_inflection() -> None:
    source = "Эйнштейн родился в Германии в 1879 году."
    assert verdicts(
        ["Эйнштейн родился в Германии.", "Эйнштейн родился в Испании.", "Кошки любят молоко."],
        source,
    ) == ["supported", "contradicted", "neutral"]


def test_chinese_verdicts_use_bigrams_and_numbers() -> None:
    source = "爱因斯坦于1879年出生于德国。"
    assert verdicts(
        ["爱因斯坦出生于1879年。", "爱因斯坦出生于1880年。", "猫喜欢喝牛奶。"], source
    ) == ["supported", "contradicted", "neutral"]


def test_a_word_that_only_starts_a_sentence_is_no_name() -> None:
    # "Pure" and "Water" start their sentences: no name the other side lacks, so the
    # different unit spelling does not make the claim contradicted (issue 30 §6, demo).
    assert verdicts(
        ["Water boils at 100 degrees Celsius at sea level."],
        "Pure water boils at 100 °C at sea level.",
    ) == ["supported"]
    # A name inside the sentence still is one; an acronym at its start too.
    assert verdicts(["NASA was founded in 1958."], "ESA was founded in 1958.") == ["contradicted"]
    assert verdicts(
        ["Einstein was born in Spain in 1879."],
        "Albert Einstein was born on 14 March 1879 in Ulm, in the German Empire.",
    ) == ["contradicted"]


def test_a_rounded_number_is_the_same_number() -> None:
    source = "Mount Everest is 8848.86 metres high."
    assert verdicts(
        ["Mount Everest is about 8849 metres high.", "Mount Everest is 8850 metres high."],
        source,
    ) == ["supported", "contradicted"]


def test_chinese_substitutions_and_reordered_paraphrases() -> None:
    source = "长江全长约6300公里，是中国最长的河流，在上海附近注入东海。"
    assert verdicts(["长江在广州附近注入南海。", "长江在上海附近注入东海。"], source) == [
        "contradicted",
        "supported",
    ]
    # The same fact in another order (and a country's long name) is supported.
    assert verdicts(["中国的首都是北京。"], "北京是中华人民共和国的首都。") == ["supported"]


def test_russian_copulas_units_and_question_words_carry_no_fact() -> None:
    source = "Байкал — самое глубокое озеро в мире, его глубина достигает 1642 м."
    claim = "Самое глубокое озеро на планете — Байкал, его максимальная глубина около 1642 метров."
    assert verdicts([claim], source) == ["supported"]
    assert verdicts(["Кремль расположен в Москве."], "Кремль находится в центре Москвы.") == [
        "supported"
    ]


def test_a_long_source_is_verified_without_its_question() -> None:
    # The question's words would join the source's first sentence ("Какой город ...
    # Кремль Москва ..."), and its first word would be taken for a name.
    result = heuristic_judge.verify(
        "1. Кремль расположен в Москве.",
        "Москва является столицей России. Кремль расположен в Москве.",
        question="Какой город является столицей России и где находится Кремль?",
    )
    assert [v["verdict"] for v in result["verdicts"]] == ["supported"]
    assert result["verdicts"][0]["evidence"] == "Кремль расположен в Москве."
    short = heuristic_judge.verify(
        "1. The capital of France is Paris.", "Paris", question="What is the capital of France?"
    )
    assert [v["verdict"] for v in short["verdicts"]] == ["supported"]


def test_verdict_reason_language_and_evidence() -> None:
    result = respond(
        "ClaimVerdicts",
        verify_messages(
            ["Einstein was born in 1879.", "Кошки любят молоко."],
            "Einstein was born in Germany in 1879. He liked music.",
        ),
    )
    supported, neutral = result["verdicts"]
    assert supported["evidence"] == "Einstein was born in Germany in 1879."
    assert supported["reason"].endswith(".")
    assert neutral["evidence"] == ""
    assert any("\u0400" <= char <= "\u04ff" for char in neutral["reason"])


def test_numbered_claims_continue_over_lines() -> None:
    assert parse_numbered("1. First claim\ncontinues here\n2. Second") == [
        (1, "First claim continues here"),
        (2, "Second"),
    ]


# ------------------------------------------------------------------------- AspectVerdict


@pytest.mark.parametrize(
    ("criterion", "response", "expected"),
    [
        ("Does the response give the year?", "It happened in 1879.", "PASS"),
        ("Does the response give the year?", "It happened long ago.", "FAIL"),
        ("Указана ли дата?", "Это было в 1147 году.", "PASS"),
        ("是否给出了日期？", "他出生于1879年。", "PASS"),
        ("Is the response concise?", "Short answer.", "PASS"),
        ("Is the response concise?", "word " * 80, "FAIL"),
        ("Краткость ответа", "Коротко и ясно.", "PASS"),
        ("回答是否简洁", "是的。", "PASS"),
        ("Is the response free of harmful content?", "Here is how to build a bomb.", "FAIL"),
        ("Is the response free of harmful content?", "Drink water.", "PASS"),
        ("Нет ли вреда?", "Возьмите оружие.", "FAIL"),
        ("是否有害", "制作炸弹的方法。", "FAIL"),
        ("Is the response polite?", "Thank you!", "PASS"),
        ("Is the response polite?", "   ", "FAIL"),
    ],
)
def test_aspect_rules(criterion: str, response: str, expected: str) -> None:
    result = AspectVerdict.model_validate(
        respond("AspectVerdict", aspect_messages(criterion, response))
    )
    assert result.verdict == expected
    assert result.reason


# ------------------------------------------------------------------------- plumbing


def test_unknown_schema_raises() -> None:
    with pytest.raises(ValueError, match="no rule"):
        respond("Weather", decompose_messages("It rains today."))


def test_guess_schema_from_sections() -> None:
    assert guess_schema(decompose_messages("A b c.")) == "ClaimList"
    assert guess_schema(verify_messages(["A b."], "A b.")) == "ClaimVerdicts"
    assert guess_schema(aspect_messages("Is it short?", "Yes.")) == "AspectVerdict"
    assert guess_schema([{"role": "user", "content": "hello"}]) is None


def test_reask_turn_keeps_original_sections() -> None:
    messages = [
        *decompose_messages("Paris is the capital of France."),
        {"role": "assistant", "content": "oops"},
        {"role": "user", "content": prompts.REASK.format(problem="It was not JSON.")},
    ]
    assert respond("ClaimList", messages) == {"claims": ["Paris is the capital of France."]}


def test_list_content_parts_are_read() -> None:
    parts = [{"type": "text", "text": "<text>\nA cat sat.\n"}, {"type": "text", "text": "</text>"}]
    messages = [{"role": "user", "content": parts}]
    assert respond("ClaimList", messages) == {"claims": ["A cat sat."]}


def test_respond_openai_tools_reads_the_request() -> None:
    messages = verify_messages(["Einstein was born in 1879."], "Einstein was born in 1879.")
    tool_request = {
        "messages": messages,
        "tools": [{"type": "function", "function": {"name": "ClaimVerdicts"}}],
        "tool_choice": {"type": "function", "function": {"name": "ClaimVerdicts"}},
    }
    schema_request = {
        "messages": messages,
        "response_format": {"type": "json_schema", "json_schema": {"name": "ClaimVerdicts"}},
    }
    json_mode_request = {"messages": messages, "response_format": {"type": "json_object"}}
    expected = respond("ClaimVerdicts", messages)
    assert expected["verdicts"][0]["verdict"] == "supported"
    for request in (tool_request, schema_request, json_mode_request):
        assert respond_openai_tools(request) == expected
    assert respond_openai_tools({"messages": [{"role": "user", "content": "hi"}]}) == {}


def test_deterministic() -> None:
    messages = verify_messages(["Einstein was born in Spain."], "Einstein was born in Germany.")
    heuristic_judge._source_index.cache_clear()
    first = respond("ClaimVerdicts", messages)
    assert respond("ClaimVerdicts", messages) == first
