"""Replies as real judge models write them (issue 19 §1): read as a careful reader would.

Two parts. The reader itself (:mod:`langchain_answer_metrics.judging.reply_reading`, the
schemas' label and claim readers, the claim alignment), on hand-made messages. Then every
quirk of the local server's realistic judge mode through the real HTTP path (ChatOpenAI
against LocalOpenAIServer), for each metric and structured-output method the quirk applies
to: a panel of a clean judge and a quirky one on the same server must score the same, with
the same details and the same number of requests.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langchain_openai import ChatOpenAI, OpenAIEmbeddings
from pydantic import ValidationError

from langchain_answer_metrics import (
    AnswerCorrectness,
    AspectCritic,
    FactualCorrectness,
    Faithfulness,
)
from langchain_answer_metrics.core.redaction import register_secret
from langchain_answer_metrics.core.result import MetricResult
from langchain_answer_metrics.judging.errors import StepError, StructuredOutputError
from langchain_answer_metrics.judging.judges import Judge
from langchain_answer_metrics.judging.numbered import count_check, in_item_order, item_numbers
from langchain_answer_metrics.judging.reply_reading import excerpt, json_objects, read_reply
from langchain_answer_metrics.judging.schemas import (
    AspectVerdict,
    ClaimList,
    ClaimVerdict,
    ClaimVerdicts,
)
from langchain_answer_metrics.judging.steps.claims import verify_claims
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer, heuristic_responder
from langchain_answer_metrics.testing.quirks import REALISTIC
from langchain_answer_metrics.testing.requests import RequestInfo
from langchain_answer_metrics.testing.scripted import ScriptedChatModel, numbered_claims

VERDICTS = {
    "verdicts": [
        {"index": 1, "reason": "r1", "evidence": "", "verdict": "supported"},
        {"index": 2, "reason": "r2", "evidence": "e", "verdict": "neutral"},
    ]
}
VERDICTS_JSON = json.dumps(VERDICTS)


def parsed(message: AIMessage, schema: type[Any] = ClaimVerdicts) -> Any:
    reading = read_reply(message, schema)
    assert reading.parsed is not None, reading.problem
    return reading.parsed


# --------------------------------------------------------------------------- the reader


@pytest.mark.parametrize(
    "content",
    [
        VERDICTS_JSON,
        f"```json\n{VERDICTS_JSON}\n```",
        f"```\n{VERDICTS_JSON}\n```",
        f"Here is the JSON you asked for:\n{VERDICTS_JSON}",
        f"Sure! {VERDICTS_JSON}\nLet me know if you need more.",
        f'<think>\nIt needs {{ and }}; say {{"verdicts": []}}.\n</think>\n\n{VERDICTS_JSON}',
        f"<THINK>{{not json}}</THINK>```json\n{VERDICTS_JSON}\n```",
        # A chat template that opens the block in the prompt: only the closing tag comes back.
        f"Let me weigh {{claim 1}} first.</think>\n{VERDICTS_JSON}",
        [{"type": "text", "text": f"Here it is: {VERDICTS_JSON}"}],
    ],
    ids=[
        "bare",
        "fenced",
        "plain-fence",
        "prose",
        "prose-around",
        "think",
        "think-fenced",
        "closing-think-only",
        "blocks",
    ],
)
def test_json_in_content_is_found_wherever_the_model_put_it(content: Any) -> None:
    assert parsed(AIMessage(content=content)) == ClaimVerdicts.model_validate(VERDICTS)


def test_nested_json_is_one_object_and_braces_in_strings_do_not_confuse() -> None:
    reply = {"verdicts": [{"index": 1, "reason": 'uses {x} and "}"', "verdict": "neutral"}]}
    text = f"Answer {{draft}}: {json.dumps(reply)} done."
    assert json_objects(text) == [reply]
    assert parsed(AIMessage(content=text)).verdicts[0].reason == 'uses {x} and "}"'


def test_an_unclosed_think_block_hides_what_follows() -> None:
    # Reasoning cut off mid-way: the braces in it are not the answer.
    text = '<think>maybe {"reason": "r", "verdict": "PASS"} is right'
    reading = read_reply(AIMessage(content=text), AspectVerdict)
    assert reading.parsed is None
    assert "held no JSON object" in reading.problem
    assert "no prose or code fences" in reading.problem


def test_two_different_answers_are_refused_not_picked() -> None:
    first = json.dumps({"reason": "a", "verdict": "PASS"})
    second = json.dumps({"reason": "b", "verdict": "FAIL"})
    reading = read_reply(AIMessage(content=f"{first}\nOr rather:\n{second}"), AspectVerdict)
    assert reading.parsed is None
    assert "2 different AspectVerdict objects" in reading.problem
    # The same answer twice (fenced and repeated) is one answer.
    same = read_reply(AIMessage(content=f"{first}\n```json\n{first}\n```"), AspectVerdict)
    assert same.parsed == AspectVerdict(reason="a", verdict="PASS")


def test_invalid_tool_calls_are_read_and_reported() -> None:
    fenced = AIMessage(
        content="",
        invalid_tool_calls=[
            {
                "type": "invalid_tool_call",
                "name": "ClaimVerdicts",
                "id": "c1",
                "args": f"```json\n{VERDICTS_JSON}\n```",
                "error": "bad JSON",
            }
        ],
    )
    assert parsed(fenced) == ClaimVerdicts.model_validate(VERDICTS)
    broken = AIMessage(
        content="",
        invalid_tool_calls=[
            {
                "type": "invalid_tool_call",
                "name": "ClaimVerdicts",
                "id": "c1",
                "args": '{"verdicts": [',
                "error": "Unterminated",
            }
        ],
    )
    reading = read_reply(broken, ClaimVerdicts, tool=True)
    assert reading.parsed is None
    assert "ClaimVerdicts tool call's arguments were not valid JSON (Unterminated)" in (
        reading.problem
    )
    assert "Call the ClaimVerdicts tool" in reading.problem
    assert reading.excerpt == '{"verdicts": ['


def test_a_valid_tool_call_wins_over_content() -> None:
    message = AIMessage(
        content='{"reason": "from content", "verdict": "FAIL"}',
        tool_calls=[
            {"name": "AspectVerdict", "args": {"reason": "tool", "verdict": "Pass"}, "id": "c1"}
        ],
    )
    assert parsed(message, AspectVerdict) == AspectVerdict(reason="tool", verdict="PASS")


def test_excerpt_is_short_one_line_and_redacted() -> None:
    secret = "sk-live-tolerant-0123456789abcdef"
    register_secret(secret)
    reply = f"I cannot do that.\nMy key is {secret}.\n" + "blah " * 100
    reading = read_reply(AIMessage(content=reply), AspectVerdict)
    assert reading.parsed is None
    assert secret not in reading.excerpt
    assert "<redacted>" in reading.excerpt
    assert "\n" not in reading.excerpt
    assert len(reading.excerpt) <= 200
    assert reading.excerpt.startswith("I cannot do that. My key is <redacted>.")
    assert excerpt("short") == "short"


@pytest.mark.parametrize(
    ("given", "label"),
    [
        ("Supported", "supported"),
        ("SUPPORTED", "supported"),
        (" supported. ", "supported"),
        ("Contradicted.", "contradicted"),
        ("neutral", "neutral"),
    ],
)
def test_claim_labels_in_any_case_with_spaces_or_a_full_stop(given: str, label: str) -> None:
    verdict = ClaimVerdict.model_validate({"index": 1, "reason": "r", "verdict": given})
    assert verdict.verdict == label


@pytest.mark.parametrize(
    ("given", "label"), [("Pass", "PASS"), ("pass", "PASS"), (" FAIL. ", "FAIL"), ("Fail.", "FAIL")]
)
def test_aspect_labels_in_any_case(given: str, label: str) -> None:
    assert AspectVerdict.model_validate({"reason": "r", "verdict": given}).verdict == label


@pytest.mark.parametrize(
    "given", ["supported or neutral", "support", "supported!", "yes", "", "supported..", None]
)
def test_labels_that_need_guessing_are_refused(given: Any) -> None:
    with pytest.raises(ValidationError):
        ClaimVerdict.model_validate({"index": 1, "reason": "r", "verdict": given})
    reply = {"verdicts": [{"index": 1, "reason": "r", "verdict": given}]}
    reading = read_reply(AIMessage(content=json.dumps(reply)), ClaimVerdicts)
    assert reading.parsed is None
    assert "verdicts.0.verdict" in reading.problem
    if isinstance(given, str):
        assert "must be exactly one of 'supported', 'contradicted' or 'neutral'" in (
            reading.problem
        )


def test_claims_as_objects_are_read_as_their_text() -> None:
    given = {"claims": [{"claim": "A."}, {"text": "B."}, "C.", {"claim": "D.", "id": 4}]}
    assert ClaimList.model_validate(given).claims == ["A.", "B.", "C.", "D."]
    # Two different texts in one object: which is the claim would be a guess.
    with pytest.raises(ValidationError):
        ClaimList.model_validate({"claims": [{"claim": "A.", "text": "B."}]})
    with pytest.raises(ValidationError):
        ClaimList.model_validate({"claims": [{"statement": "A."}]})


def test_verdict_fields_come_reasoning_first_and_index_is_asked_for() -> None:
    assert list(ClaimVerdict.model_fields) == ["index", "reason", "evidence", "verdict"]
    assert list(AspectVerdict.model_fields) == ["reason", "verdict"]
    schema = ClaimVerdict.model_json_schema()
    assert schema["required"][0] == "index"
    assert schema["properties"]["index"]["type"] == "integer"
    # ...but a verdict without one is still read.
    assert ClaimVerdict.model_validate({"reason": "r", "verdict": "neutral"}).index is None


def _verdicts(*indices: int | None) -> list[ClaimVerdict]:
    return [
        ClaimVerdict(index=index, reason=f"r{position}", verdict="neutral")
        for position, index in enumerate(indices)
    ]


@pytest.mark.parametrize(
    ("indices", "order", "in_order"),
    [
        ((1, 2, 3), ["r0", "r1", "r2"], False),
        ((3, 1, 2), ["r1", "r2", "r0"], False),  # numbered right, given out of order
        ((0, 1, 2), ["r0", "r1", "r2"], True),
        ((1, 1, 1), ["r0", "r1", "r2"], True),
        ((None, None, None), ["r0", "r1", "r2"], True),
        ((2, 3, 4), ["r0", "r1", "r2"], True),
    ],
)
def test_alignment_by_index_else_in_order(
    indices: tuple[int | None, ...], order: list[str], in_order: bool
) -> None:
    verdicts, taken_in_order = in_item_order(_verdicts(*indices), item_numbers(len(indices)))
    assert [verdict.reason for verdict in verdicts] == order
    assert taken_in_order is in_order


@pytest.mark.parametrize(
    ("indices", "order", "in_order"),
    [
        ((2, 3), ["r0", "r1"], False),
        ((3, 2), ["r1", "r0"], False),  # a turn's own number, given out of order
        ((1, 2), ["r0", "r1"], True),  # numbered as claims, not as the turns 2 and 3
        ((3, 3), ["r0", "r1"], True),
        ((None, None), ["r0", "r1"], True),
    ],
)
def test_turns_align_by_their_own_numbers_with_the_claims_rule(
    indices: tuple[int | None, ...], order: list[str], in_order: bool
) -> None:
    verdicts, taken_in_order = in_item_order(_verdicts(*indices), [2, 3])
    assert [verdict.reason for verdict in verdicts] == order
    assert taken_in_order is in_order


def test_one_count_check_says_what_to_change_for_claims_and_turns() -> None:
    one = ClaimVerdicts(verdicts=_verdicts(1))
    assert count_check(item_numbers(2), "claim")(one) == (
        "there are 2 claims to judge, numbered 1 to 2, but your reply gave 1 verdict "
        "(indices [1]). Give exactly one verdict per claim: 2 verdicts, indices 1 to 2."
    )
    assert count_check([2, 3], "turn")(ClaimVerdicts(verdicts=[])) == (
        "there are 2 turns to judge, numbered 2, 3, but your reply gave 0 verdicts "
        "(indices none). Give exactly one verdict per turn: 2 verdicts, indices 2, 3."
    )
    # The count is checked, not the numbers: those are in_item_order's.
    assert count_check([2, 3], "turn")(ClaimVerdicts(verdicts=_verdicts(7, 7))) is None


# --------------------------------------------------------------------------- scripted judge

TWO_CLAIMS = ["Paris is in France.", "AT&T was founded in 1885."]


def _verify_responder(indices: list[int | None], reasked: list[list[BaseMessage]]) -> Any:
    def reply(schema: str, messages: list[BaseMessage]) -> Any:
        if "could not be used" in str(messages[-1].content):
            reasked.append(messages)
            indices[:] = list(range(1, len(numbered_claims(messages)) + 1))
        verdicts = [{"reason": "r", "verdict": "Supported."} for _ in indices]
        for verdict, index in zip(verdicts, indices):
            if index is not None:
                verdict["index"] = index
        return {"verdicts": verdicts}

    return reply


@pytest.mark.parametrize("indices", [[1, 1], [0, 1], [None, None], [2, 1]], ids=str)
async def test_one_verdict_per_claim_is_not_reasked(indices: list[int | None]) -> None:
    reasked: list[list[BaseMessage]] = []
    judge = Judge(model=ScriptedChatModel(responder=_verify_responder(indices, reasked)))
    verification = await verify_claims(judge, TWO_CLAIMS, ["source"])
    assert reasked == []
    assert [verdict.verdict for verdict in verification.verdicts] == ["supported"] * 2
    numbered_right = indices == [2, 1]
    assert verification.verdicts_taken_in_order is not numbered_right
    expected_flag = None if numbered_right else True
    assert [verdict.taken_in_order for verdict in verification.verdicts] == [expected_flag] * 2
    # The flag is in the dump only when set.
    assert ("taken_in_order" in verification.verdicts[0].model_dump()) is not numbered_right
    assert verification.usage.requests == 1


@pytest.mark.parametrize("indices", [[1], [1, 2, 3], []], ids=str)
async def test_a_count_that_differs_is_reasked_with_a_precise_message(indices: list[int]) -> None:
    reasked: list[list[BaseMessage]] = []
    given = list(indices)
    judge = Judge(model=ScriptedChatModel(responder=_verify_responder(indices, reasked)))
    verification = await verify_claims(judge, TWO_CLAIMS, ["source"])
    assert len(reasked) == 1
    problem = str(reasked[0][-1].content)
    count = len(given)
    assert f"your reply gave {count} verdict{'' if count == 1 else 's'}" in problem
    assert "Give exactly one verdict per claim: 2 verdicts, indices 1 to 2." in problem
    assert verification.verdicts_taken_in_order is False
    assert verification.usage.requests == 2


async def test_an_unusable_reply_names_what_came_back_redacted() -> None:
    secret = "sk-live-tolerant-excerpt-987654321"
    register_secret(secret)

    def reply(schema: str, messages: list[BaseMessage]) -> Any:
        return f"Sorry, I use the key {secret} and cannot judge this {{really}}."

    judge = Judge(model=ScriptedChatModel(responder=reply), max_reasks=1)
    with pytest.raises(StepError) as caught:
        await verify_claims(judge, TWO_CLAIMS, ["source"])
    assert isinstance(caught.value.error, StructuredOutputError)
    message = str(caught.value.error)
    assert "after 2 attempts" in message
    assert "ClaimVerdicts tool call's arguments were not valid JSON" in message
    assert "it replied 'Sorry, I use the key <redacted> and cannot judge" in message
    # One readable line: no LangChain link, none of our instructions to the model.
    assert "\n" not in message and "troubleshooting" not in message.lower()
    assert "Call the ClaimVerdicts tool" not in message
    assert caught.value.error.reply_excerpt == (
        "Sorry, I use the key <redacted> and cannot judge this {really}."
    )
    assert secret not in message


# --------------------------------------------------------------------------- through HTTP

SAMPLE = {
    "user_input": "What do we know about AT&T, and when does the check hold?",
    "response": "AT&T was founded in 1885 in Boston. The check x < y holds when a && b is "
    "true. Alexander Bell founded AT&T in 1885.",
    "reference": "AT&T was founded in 1885 in New York. The check x < y holds when a && b is true.",
    "retrieved_contexts": [
        "AT&T was founded in 1885 in New York.",
        "The check x < y holds when a && b is true.",
    ],
}
# In every reason: so echo_escaping has escapes to leave in them, for the reader to undo.
SEEN = " Seen: AT&T, x < y, a && b."


def responder(info: RequestInfo) -> Mapping[str, Any] | str:
    reply = heuristic_responder(info)
    if not isinstance(reply, Mapping):
        return reply
    if "verdicts" in reply:
        return {"verdicts": [{**v, "reason": v["reason"] + SEEN} for v in reply["verdicts"]]}
    if "reason" in reply:
        return {**reply, "reason": reply["reason"] + SEEN}
    return reply


@pytest.fixture(scope="module")
def shared_server() -> Any:
    with LocalOpenAIServer(responder=responder) as server:
        yield server


CLEAN, QUIRKY = "judge-clean", "judge-quirky"

LABELS_AND_DATA = [
    ("capitalised_labels",),
    ("upper_labels",),
    ("padded_labels",),
    ("index_all_one",),
    ("index_zero_based",),
    ("index_missing",),
    ("claim_objects",),
    ("text_objects",),
    ("echo_escaping",),
]
CONTENT = [
    ("fenced_json",),
    ("prose_json",),
    ("think_json",),
    ("think_json", "prose_json", "fenced_json"),
]
TOOLS_ONLY = [
    ("ignore_tools",),
    ("invalid_tool_arguments",),
    *[("ignore_tools", *content) for content in CONTENT],
]
# The labels and data quirks read the same whatever the method: the fast tier reads them
# through json_schema, the whole suite through every method.
CASES = [
    *[
        (method, quirks)
        if method == "json_schema" or quirks == REALISTIC
        else pytest.param(method, quirks, marks=pytest.mark.slow)
        for method in ("function_calling", "json_mode", "json_schema")
        for quirks in [*LABELS_AND_DATA, REALISTIC]
    ],
    *[(method, quirks) for method in ("json_mode", "json_schema") for quirks in CONTENT],
    *[("function_calling", quirks) for quirks in TOOLS_ONLY],
]


def own_url(server: LocalOpenAIServer) -> str:
    # A base URL of its own (the server routes by suffix), so a fresh async client: one
    # pooled by an earlier test's closed event loop would fail (see test_event_loops.py).
    return f"{server.url}/{uuid.uuid4().hex}/v1"


def judge(server: LocalOpenAIServer, model: str, method: str, url: str | None = None) -> Judge:
    llm = ChatOpenAI(
        base_url=url or own_url(server),
        api_key="sk-test",
        model=model,
        use_responses_api=False,
        max_retries=0,
    )
    return Judge(model=llm, method=method)  # type: ignore[arg-type]


def metric(kind: str, server: LocalOpenAIServer, method: str) -> Any:
    url = own_url(server)
    panel = [judge(server, CLEAN, method, url), judge(server, QUIRKY, method, url)]
    if kind == "factual_correctness":
        return FactualCorrectness(llm=panel)
    if kind == "faithfulness":
        return Faithfulness(llm=panel)
    if kind == "aspect_critic":
        # Three votes: one request for all with n= under function_calling.
        return AspectCritic(
            llm=panel, criterion="Does it give a year & no <b>markup</b>?", strictness=3
        )
    embeddings = OpenAIEmbeddings(
        base_url=url,
        api_key="sk-test",
        model="emb",
        check_embedding_ctx_length=False,
        max_retries=0,
    )
    return AnswerCorrectness(llm=panel, embeddings=embeddings)


def per_judge(result: MetricResult) -> tuple[dict[str, float], dict[str, Any]]:
    """Each judge's score and details, whatever the metric nests them in."""
    if result.key == "answer_correctness":
        factual = result.details["factual_correctness"]
        return dict(factual.per_model), factual.details.model_dump()["models"]
    return dict(result.per_model), result.details.model_dump()["models"]


def without_order_flags(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_order_flags(v) for k, v in value.items() if k != "taken_in_order"}
    if isinstance(value, list):
        return [without_order_flags(item) for item in value]
    return value


CLAIM_QUIRKS = {
    "index_all_one",
    "index_zero_based",
    "index_missing",
    "claim_objects",
    "text_objects",
}
INDEX_QUIRKS = {"index_all_one", "index_zero_based", "index_missing"}


def assert_same_as_clean(
    server: LocalOpenAIServer, result: MetricResult, kind: str, method: str, quirks: Any
) -> None:
    assert result.excluded == []
    scores, details = per_judge(result)
    assert scores[QUIRKY] == pytest.approx(scores[CLEAN], abs=1e-12)
    assert without_order_flags(details[QUIRKY]) == without_order_flags(details[CLEAN])
    # No extra request: no re-ask, nothing asked twice.
    assert server.model_counts[QUIRKY] == server.model_counts[CLEAN]
    quirky = [entry for entry in server.requests if entry.model == QUIRKY]
    assert [entry.attempt for entry in quirky] == [0] * len(quirky)
    assert [entry.quirks for entry in server.requests if entry.model == CLEAN] == [
        () for entry in server.requests if entry.model == CLEAN
    ]
    # Every quirk that can show did show: else this test would prove nothing.
    applied = {quirk for entry in quirky for quirk in entry.quirks}
    cannot_show = set() if method == "function_calling" else {"ignore_tools"}
    if kind == "aspect_critic":
        cannot_show |= CLAIM_QUIRKS | {"upper_labels"}  # AspectVerdict's labels are upper
    assert set(quirks) - cannot_show <= applied, applied
    if kind != "aspect_critic":
        flags = {
            claim.get("taken_in_order")
            for side in ("response_claims", "reference_claims")
            for claim in details[QUIRKY].get(side) or []
        }
        assert flags == ({True} if INDEX_QUIRKS & set(quirks) else {None})


KINDS = ["factual_correctness", "faithfulness", "answer_correctness", "aspect_critic"]
# A quirk is read by the schema's reader, the same whichever metric asked: the fast tier
# sees each quirk through FactualCorrectness (ClaimList, ClaimVerdicts) and AspectCritic
# (AspectVerdict), and every metric through the realistic bundle; the whole suite sees
# every metric through every quirk.
SCHEMA_KINDS = {"factual_correctness", "aspect_critic"}


def quirky_cases() -> list[Any]:
    cases = []
    for case in CASES:
        method, quirks = case.values if hasattr(case, "values") else case
        marks = list(getattr(case, "marks", ()))
        for kind in KINDS:
            slow = marks or (quirks != REALISTIC and kind not in SCHEMA_KINDS)
            cases.append(
                pytest.param(
                    method,
                    quirks,
                    kind,
                    id=f"{method}-{'+'.join(quirks)}-{kind}",
                    marks=[pytest.mark.slow] if slow else [],
                )
            )
    return cases


@pytest.mark.parametrize(("method", "quirks", "kind"), quirky_cases())
async def test_a_quirky_judge_scores_what_a_clean_one_does(
    server: LocalOpenAIServer, kind: str, method: str, quirks: tuple[str, ...]
) -> None:
    server.quirks = {QUIRKY: quirks}
    result = await metric(kind, server, method).ainvoke(SAMPLE)
    assert_same_as_clean(server, result, kind, method, quirks)


@pytest.mark.parametrize(
    "kind", ["factual_correctness", "faithfulness", "answer_correctness", "aspect_critic"]
)
@pytest.mark.parametrize("method", ["function_calling", "json_mode", "json_schema"])
def test_a_realistic_judge_scores_what_a_clean_one_does_sync(
    server: LocalOpenAIServer, kind: str, method: str
) -> None:
    server.quirks = {QUIRKY: REALISTIC}
    result = metric(kind, server, method).invoke(SAMPLE)
    assert_same_as_clean(server, result, kind, method, REALISTIC)


ESCAPED_CLAIMS = (
    "1. AT&amp;T was founded in 1885 in Boston.\n"
    "2. The check x &lt; y holds when a &amp;&amp; b is true.\n"
    "3. Alexander Bell founded AT&amp;T in 1885."
)


@pytest.mark.parametrize("method", ["function_calling", "json_mode", "json_schema"])
async def test_escaping_never_comes_back(server: LocalOpenAIServer, method: str) -> None:
    server.quirks = {QUIRKY: ("echo_escaping",)}
    result = await metric("faithfulness", server, method).ainvoke(SAMPLE)
    assert result.excluded == []
    # The verify request after decompose carries the claims escaped once, as data.
    for model in (CLEAN, QUIRKY):
        (user,) = [
            entry.body["messages"][-1]["content"]
            for entry in server.requests
            if entry.model == model
            and entry.body is not None
            and "<claims>\n" in entry.body["messages"][-1]["content"]
        ]
        claims = re.search(r"<claims>\n(.*?)\n</claims>", user, re.DOTALL)
        assert claims is not None and claims.group(1) == ESCAPED_CLAIMS
        assert "&amp;amp;" not in user
    # Results: the characters as the answer wrote them, in claims, reasons and evidence.
    claims = result.details.models[QUIRKY].response_claims
    assert [claim.claim for claim in claims] == [
        "AT&T was founded in 1885 in Boston.",
        "The check x < y holds when a && b is true.",
        "Alexander Bell founded AT&T in 1885.",
    ]
    assert all(claim.reason.endswith(SEEN) for claim in claims)
    assert "a && b" in claims[1].evidence and "x < y" in claims[1].evidence
    assert "&amp;" not in json.dumps(result.model_dump())
    assert "&lt;" not in json.dumps(result.model_dump())


async def test_aspect_reason_is_read_back_from_its_escaping(server: LocalOpenAIServer) -> None:
    server.quirks = {QUIRKY: ("echo_escaping", "capitalised_labels")}
    result = await metric("aspect_critic", server, "json_mode").ainvoke(SAMPLE)
    reasons = result.details.models[QUIRKY].reasons
    assert reasons and all(reason.endswith(SEEN) for reason in reasons)
    assert any("echo_escaping" in entry.quirks for entry in server.requests)


async def test_json_schema_request_is_what_langchain_would_send(
    server: LocalOpenAIServer,
) -> None:
    # Read by us rather than by the openai client, the json_schema request is unchanged:
    # strict, every field required, named after the schema.
    server.quirks = {}
    llm = judge(server, CLEAN, "json_schema").model
    prompt = "Judge this JSON: <criterion>\nA year.\n</criterion><response>\n1885\n</response>"
    for schema in (AspectVerdict, ClaimVerdicts):
        await llm.with_structured_output(schema, method="json_schema").ainvoke(prompt)
        request = Judge(model=llm, method="json_schema").structured_request(schema)
        ours = await request.ainvoke(prompt)
        assert isinstance(ours["raw"], AIMessage)
        theirs, mine = server.requests[-2:]
        assert theirs.body is not None and mine.body is not None
        assert mine.body["response_format"] == theirs.body["response_format"]
        assert mine.body["response_format"]["json_schema"]["strict"] is True


async def test_an_unreadable_http_reply_is_reasked_saying_what_to_change(
    server: LocalOpenAIServer,
) -> None:
    answers = iter(["I think it passes.", None])

    def reply(info: RequestInfo) -> Mapping[str, Any] | str:
        answer = next(answers)
        return answer if answer is not None else responder(info)

    server.responder = reply
    try:
        result = await AspectCritic(
            llm=judge(server, CLEAN, "json_mode"), criterion="Gives a year."
        ).ainvoke(SAMPLE)
    finally:
        server.responder = responder
    assert result.score == 1.0
    _, second = server.requests
    assert second.body is not None
    reask = second.body["messages"][-1]["content"]
    assert "the reply held no JSON object" in reask
    assert "Reply with only the JSON object, no prose or code fences." in reask


async def test_a_reply_the_model_call_rejected_is_read_from_the_error(
    server: LocalOpenAIServer,
) -> None:
    # A model init_chat_model builds per call binds json_schema as a Pydantic class when
    # called, so the openai client parses the reply inside the call and raises on fences
    # and reasoning: the text Pydantic quotes is read instead of re-asking.
    from langchain.chat_models import init_chat_model

    server.quirks = {QUIRKY: ("think_json", "fenced_json", "capitalised_labels")}
    url = own_url(server)

    def built_per_call(model: str) -> Judge:
        llm = init_chat_model(
            model,
            model_provider="openai",
            configurable_fields=("temperature",),
            base_url=url,
            api_key="sk-test",
            use_responses_api=False,
            max_retries=0,
        )
        return Judge(model=llm, method="json_schema")

    result = await FactualCorrectness(llm=[built_per_call(CLEAN), built_per_call(QUIRKY)]).ainvoke(
        SAMPLE
    )
    assert result.excluded == []
    assert result.per_model[QUIRKY] == pytest.approx(result.per_model[CLEAN], abs=1e-12)
    assert server.model_counts[QUIRKY] == server.model_counts[CLEAN] == 4
    assert any("think_json" in entry.quirks for entry in server.requests)
    # Every request is counted; the tokens of a reply lost inside the call are not known.
    assert result.usage[QUIRKY].requests == result.usage[CLEAN].requests == 4


def test_verdicts_taken_in_order_are_kept_in_out_records(
    server: LocalOpenAIServer, tmp_path: Path
) -> None:
    """The --out record says which verdicts were taken in claim order, as the result does;
    a clean judge's record has no such flag."""
    from test_cli import cli, out_lines, write_jsonl

    data = write_jsonl(tmp_path / "qa.jsonl", [SAMPLE])
    flags = {}
    for model, quirks in (("judge-clean", ()), (QUIRKY, ("index_all_one",))):
        server.quirks = {model: quirks}
        out = tmp_path / f"{model}.jsonl"
        result = cli(
            "evaluate",
            data,
            "--metric",
            "faithfulness",
            "--base-url",
            server.base_url,
            "--model",
            model,
            "--out",
            out,
            "--quiet",
        )
        assert result.returncode == 0, result.stderr
        claims = out_lines(out)[0]["metrics"]["faithfulness"]["claims"]
        assert len(claims) >= 2
        flags[model] = [claim.get("taken_in_order") for claim in claims]
    assert flags == {
        "judge-clean": [None] * len(flags["judge-clean"]),
        QUIRKY: [True] * len(flags[QUIRKY]),
    }
