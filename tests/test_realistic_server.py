"""The local server's realistic judge mode (``quirks=``), through real HTTP clients.

Each quirk must produce exactly the reply shape documented in
:mod:`langchain_answer_metrics.testing.quirks`, for ClaimList, ClaimVerdicts and
AspectVerdict requests in tools, json_schema and json_object mode, and must keep the meaning:
the small tolerant reader below (:func:`recover`) reads every quirky reply back to the clean
one. The package's own tolerant reader is tested elsewhere, with the package's metrics.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from langchain_core.messages import AIMessage
from langchain_openai import ChatOpenAI
from pydantic import BaseModel

from langchain_answer_metrics.judging import prompts
from langchain_answer_metrics.judging.schemas import AspectVerdict, ClaimList, ClaimVerdicts
from langchain_answer_metrics.testing.openai_server import (
    QUIRKS,
    REALISTIC,
    LocalOpenAIServer,
    Quirk,
    RequestInfo,
    heuristic_responder,
)
from langchain_answer_metrics.testing.prompt_reading import prompt_sections

SCHEMAS = ("ClaimList", "ClaimVerdicts", "AspectVerdict")
MODES = ("tools", "json_schema", "json_object")
PYDANTIC: dict[str, type[BaseModel]] = {
    "ClaimList": ClaimList,
    "ClaimVerdicts": ClaimVerdicts,
    "AspectVerdict": AspectVerdict,
}

TEXT = "Tom & Jerry <3 cheese. Jerry is a mouse ＜ Tom."
SOURCE = "Tom & Jerry <3 cheese. Jerry is a cat."
PROMPTS: dict[str, list[dict[str, str]]] = {
    "ClaimList": [
        {"role": "system", "content": prompts.DECOMPOSE_SYSTEM},
        {
            "role": "user",
            "content": prompts.DECOMPOSE_USER.format(question="", text=prompts.tag("text", TEXT)),
        },
    ],
    "ClaimVerdicts": [
        {"role": "system", "content": prompts.VERIFY_SYSTEM},
        {
            "role": "user",
            "content": prompts.VERIFY_USER.format(
                count=3,
                question="",
                source=prompts.tag("source", SOURCE),
                claims=prompts.tag(
                    "claims",
                    prompts.number_claims(
                        ["Tom & Jerry <3 cheese.", "Jerry is a mouse.", "Tom is grey."]
                    ),
                ),
            ),
        },
    ],
    "AspectVerdict": [
        {"role": "system", "content": prompts.ASPECT_SYSTEM},
        {
            "role": "user",
            "content": prompts.ASPECT_USER.format(
                criterion=prompts.tag("criterion", "The response says yes."),
                question="",
                response=prompts.tag("response", "<b>yes</b> & more"),
            ),
        },
    ],
}

# What the scripted judge answers, cleanly; the strings hold what the prompts escape.
CLEAN: dict[str, dict[str, Any]] = {
    "ClaimList": {"claims": ["Tom & Jerry <3 cheese.", "Jerry is a mouse ＜ Tom."]},
    "ClaimVerdicts": {
        "verdicts": [
            {
                "index": 1,
                "verdict": "supported",
                "reason": "The source says Tom & Jerry <3 cheese.",
                "evidence": "Tom & Jerry <3 cheese",
            },
            {
                "index": 2,
                "verdict": "contradicted",
                "reason": "The source calls Jerry a cat.",
                "evidence": "Jerry is a cat",
            },
            {"index": 3, "verdict": "neutral", "reason": "Not in the source.", "evidence": ""},
        ]
    },
    "AspectVerdict": {"reason": "It answers <b>yes</b> & more.", "verdict": "PASS"},
}


def _verdicts(**changes: list[Any]) -> dict[str, Any]:
    """CLEAN's ClaimVerdicts with the given keys replaced per verdict (None drops the key)."""
    verdicts = copy.deepcopy(CLEAN["ClaimVerdicts"]["verdicts"])
    for key, values in changes.items():
        for verdict, value in zip(verdicts, values, strict=True):
            if value is None:
                del verdict[key]
            else:
                verdict[key] = value
    return {"verdicts": verdicts}


# The documented reply of each payload quirk; a schema not listed gets the clean reply.
EXPECTED: dict[str, dict[str, dict[str, Any]]] = {
    "capitalised_labels": {
        "ClaimVerdicts": _verdicts(verdict=["Supported", "Contradicted", "Neutral"]),
        "AspectVerdict": {"reason": "It answers <b>yes</b> & more.", "verdict": "Pass"},
    },
    "upper_labels": {"ClaimVerdicts": _verdicts(verdict=["SUPPORTED", "CONTRADICTED", "NEUTRAL"])},
    "padded_labels": {
        "ClaimVerdicts": _verdicts(verdict=[" supported. ", " contradicted. ", " neutral. "]),
        "AspectVerdict": {"reason": "It answers <b>yes</b> & more.", "verdict": " PASS. "},
    },
    "index_all_one": {"ClaimVerdicts": _verdicts(index=[1, 1, 1])},
    "index_zero_based": {"ClaimVerdicts": _verdicts(index=[0, 1, 2])},
    "index_missing": {"ClaimVerdicts": _verdicts(index=[None, None, None])},
    "claim_objects": {
        "ClaimList": {
            "claims": [{"claim": "Tom & Jerry <3 cheese."}, {"claim": "Jerry is a mouse ＜ Tom."}]
        }
    },
    "text_objects": {
        "ClaimList": {
            "claims": [{"text": "Tom & Jerry <3 cheese."}, {"text": "Jerry is a mouse ＜ Tom."}]
        }
    },
    "echo_escaping": {
        "ClaimList": {
            "claims": ["Tom &amp; Jerry &lt;3 cheese.", "Jerry is a mouse &#xFF1C; Tom."]
        },
        "ClaimVerdicts": _verdicts(
            reason=[
                "The source says Tom &amp; Jerry &lt;3 cheese.",
                "The source calls Jerry a cat.",
                "Not in the source.",
            ],
            evidence=["Tom &amp; Jerry &lt;3 cheese", "Jerry is a cat", ""],
        ),
        "AspectVerdict": {
            "reason": "It answers &lt;b&gt;yes&lt;/b&gt; &amp; more.",
            "verdict": "PASS",
        },
    },
}
CONTENT_QUIRKS = ("fenced_json", "prose_json", "think_json", "echo_input")


def dumps(payload: Any) -> str:
    return json.dumps(payload, ensure_ascii=False)


def scripted(info: RequestInfo) -> dict[str, Any]:
    assert info.schema_name in CLEAN, info.schema_name
    return copy.deepcopy(CLEAN[info.schema_name])


@pytest.fixture(scope="module")
def shared_server() -> Iterator[LocalOpenAIServer]:
    with LocalOpenAIServer(responder=scripted) as server:
        yield server


@pytest.fixture
def realistic(server: LocalOpenAIServer) -> Iterator[LocalOpenAIServer]:
    """The module's server with the scripted judge; quirks and responder restored after."""
    yield server
    server.quirks = None
    server.responder = scripted


@functools.lru_cache(maxsize=4)
def client(base_url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=base_url, api_key="sk-test", max_retries=0)


def request_options(schema: str, mode: str) -> dict[str, Any]:
    """The body options a structured-output client sends for ``schema`` in ``mode``."""
    json_schema = PYDANTIC[schema].model_json_schema()
    if mode == "tools":
        return {
            "tools": [
                {"type": "function", "function": {"name": schema, "parameters": json_schema}}
            ],
            "tool_choice": {"type": "function", "function": {"name": schema}},
        }
    if mode == "json_schema":
        return {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": schema, "schema": json_schema},
            }
        }
    return {"response_format": {"type": "json_object"}}


def ask(
    server: LocalOpenAIServer, model: str, schema: str, mode: str, **options: Any
) -> dict[str, Any]:
    """The first choice of a chat completion, as a dict (``message``, ``finish_reason``)."""
    completion = client(server.base_url).chat.completions.create(
        model=model,
        messages=PROMPTS[schema],  # type: ignore[arg-type]
        **request_options(schema, mode),
        **options,
    )
    choice: dict[str, Any] = completion.model_dump()["choices"][0]
    return choice


def reply_text(choice: dict[str, Any]) -> str:
    message = choice["message"]
    if message.get("tool_calls"):
        return str(message["tool_calls"][0]["function"]["arguments"])
    return str(message["content"])


# --------------------------------------------------------------------------- a tolerant reader


def recover(text: str, schema: str) -> dict[str, Any]:
    """What a tolerant reader makes of a reply: the clean payload, with indices by position.

    Drops a think block, a prose line and fences; takes claim objects' text, un-escapes
    strings, normalises labels. An oracle for "the quirk kept the meaning", nothing more.
    """
    if text.lstrip().startswith("<think>"):
        text = text.split("</think>", 1)[1]
    text = text[text.index("{") : text.rindex("}") + 1]
    data = json.loads(text)

    def plain(value: Any) -> str:
        if isinstance(value, dict):
            value = value.get("claim", value.get("text"))
        return prompts.unescape_data(str(value))

    if schema == "ClaimList":
        return {"claims": [plain(claim) for claim in data["claims"]]}
    if schema == "ClaimVerdicts":
        return {
            "verdicts": [
                {
                    "index": position,
                    "verdict": item["verdict"].strip().rstrip(".").strip().lower(),
                    "reason": plain(item["reason"]),
                    "evidence": plain(item.get("evidence", "")),
                }
                for position, item in enumerate(data["verdicts"], start=1)
            ]
        }
    return {
        "reason": plain(data["reason"]),
        "verdict": data["verdict"].strip().rstrip(".").strip().upper(),
    }


# --------------------------------------------------------------------------- each quirk's shape


def quirk_cases(
    quirks: list[Any], ids: list[str], *, every_case: frozenset[str] = frozenset()
) -> list[Any]:
    """Each quirk through every schema and reply mode. The fast tier keeps, per quirk,
    each mode once and each schema once (the schema turns with the mode and the quirk, so
    every schema meets every mode too); the whole suite every combination. The quirks
    named in ``every_case`` keep all of theirs in the fast tier."""
    cases = []
    for index, (quirk, name) in enumerate(zip(quirks, ids, strict=True)):
        for schema in SCHEMAS:
            for mode in MODES:
                turn = SCHEMAS.index(schema) == (index + MODES.index(mode)) % len(SCHEMAS)
                fast = turn or name in every_case
                cases.append(
                    pytest.param(
                        quirk,
                        schema,
                        mode,
                        id=f"{name}-{schema}-{mode}",
                        marks=[] if fast else [pytest.mark.slow],
                    )
                )
    return cases


@pytest.mark.parametrize(("quirk", "schema", "mode"), quirk_cases(list(QUIRKS), list(QUIRKS)))
def test_each_quirk_gives_its_documented_reply(
    realistic: LocalOpenAIServer, quirk: Quirk, schema: str, mode: str
) -> None:
    realistic.quirks = {"judge-q": (quirk,)}
    choice = ask(realistic, "judge-q", schema, mode)
    message = choice["message"]
    clean = dumps(CLEAN[schema])
    content_reply = mode != "tools" or quirk == "ignore_tools"

    if quirk in EXPECTED:
        expected = dumps(EXPECTED[quirk].get(schema, CLEAN[schema]))
        fires = schema in EXPECTED[quirk]
    elif quirk in CONTENT_QUIRKS and content_reply:
        echoed = "\n".join(prompt_sections(PROMPTS[schema]).values())
        expected = {
            "fenced_json": f"```json\n{clean}\n```",
            "prose_json": f"Here is the JSON you asked for:\n{clean}",
            "echo_input": f"You asked me to judge this:\n{echoed}\n\n{clean}\n\n"
            f"To recap, I judged:\n{echoed}",
        }.get(quirk, "")
        fires = True
    elif quirk == "invalid_tool_arguments" and mode == "tools":
        expected, fires = f"```json\n{clean}\n```", True
    else:
        expected, fires = clean, quirk == "ignore_tools" and mode == "tools"

    if content_reply:
        assert message["tool_calls"] is None
        assert choice["finish_reason"] == "stop"
        if quirk == "think_json":
            assert message["content"].startswith("<think>\n")
            think, answer = message["content"].split("\n</think>\n\n")
            assert "{" in think and "}" in think  # a reader must not take it for the JSON
            assert answer == clean
        else:
            assert message["content"] == expected
    else:
        assert message["content"] is None
        assert choice["finish_reason"] == "tool_calls"
        (call,) = message["tool_calls"]
        assert call["function"]["name"] == schema
        assert call["function"]["arguments"] == expected
        if quirk == "invalid_tool_arguments":
            with pytest.raises(json.JSONDecodeError):
                json.loads(call["function"]["arguments"])
    assert realistic.requests[-1].quirks == ((quirk,) if fires else ())
    assert realistic.chat_requests == 1


@pytest.mark.parametrize(
    ("quirky", "schema", "mode"),
    quirk_cases(
        [(quirk,) for quirk in QUIRKS] + [REALISTIC, QUIRKS],
        [*QUIRKS, "REALISTIC", "all"],
        every_case=frozenset({"REALISTIC", "all"}),
    ),
)
def test_every_quirk_keeps_the_meaning(
    realistic: LocalOpenAIServer, quirky: tuple[Quirk, ...], schema: str, mode: str
) -> None:
    realistic.quirks = {"judge-q": quirky}
    quirky_reply = reply_text(ask(realistic, "judge-q", schema, mode))
    clean_reply = reply_text(ask(realistic, "judge-clean", schema, mode))
    assert clean_reply == dumps(CLEAN[schema])
    assert recover(quirky_reply, schema) == recover(clean_reply, schema)
    assert realistic.requests[1].quirks == ()


def test_realistic_bundle_is_the_contracts() -> None:
    assert REALISTIC == (
        "capitalised_labels",
        "index_all_one",
        "claim_objects",
        "think_json",
        "ignore_tools",
        "echo_escaping",
    )
    assert set(REALISTIC) <= set(QUIRKS)
    assert len(set(QUIRKS)) == len(QUIRKS) == 15


@pytest.mark.parametrize("mode", MODES)
def test_models_not_listed_reply_cleanly(realistic: LocalOpenAIServer, mode: str) -> None:
    realistic.quirks = {"judge-q": QUIRKS, "judge-r": REALISTIC}
    for schema in SCHEMAS:
        choice = ask(realistic, "judge-a", schema, mode)
        assert reply_text(choice) == dumps(CLEAN[schema])
        assert (choice["message"]["tool_calls"] is not None) == (mode == "tools")
    assert [entry.quirks for entry in realistic.requests] == [(), (), ()]


def test_combined_content_quirks_nest_in_documented_order(realistic: LocalOpenAIServer) -> None:
    realistic.quirks = {"judge-q": ("think_json", "fenced_json", "prose_json")}
    content = ask(realistic, "judge-q", "AspectVerdict", "json_schema")["message"]["content"]
    think, answer = content.split("\n</think>\n\n")
    assert think.startswith("<think>\n")
    clean = dumps(CLEAN["AspectVerdict"])
    assert answer == f"Here is the JSON you asked for:\n```json\n{clean}\n```"
    # Logged in QUIRKS order, whatever order they were given in.
    assert realistic.requests[-1].quirks == ("fenced_json", "prose_json", "think_json")


def test_a_quirk_that_changes_nothing_is_not_logged(realistic: LocalOpenAIServer) -> None:
    def one_verdict(info: RequestInfo) -> dict[str, Any]:
        return {"verdicts": [{"index": 1, "verdict": "neutral", "reason": "No.", "evidence": ""}]}

    realistic.responder = one_verdict
    realistic.quirks = {"judge-q": ("index_all_one", "echo_escaping", "upper_labels")}
    arguments = reply_text(ask(realistic, "judge-q", "ClaimVerdicts", "tools"))
    assert json.loads(arguments)["verdicts"][0] == {
        "index": 1,
        "verdict": "NEUTRAL",
        "reason": "No.",
        "evidence": "",
    }
    assert realistic.requests[-1].quirks == ("upper_labels",)


def test_each_choice_is_quirky(realistic: LocalOpenAIServer) -> None:
    realistic.quirks = {"judge-q": ("index_zero_based", "prose_json")}
    completion = client(realistic.base_url).chat.completions.create(
        model="judge-q",
        messages=PROMPTS["ClaimVerdicts"],  # type: ignore[arg-type]
        n=3,
        **request_options("ClaimVerdicts", "json_object"),
    )
    expected = "Here is the JSON you asked for:\n" + dumps(_verdicts(index=[0, 1, 2]))
    assert [choice.message.content for choice in completion.choices] == [expected] * 3
    assert realistic.requests[-1].quirks == ("index_zero_based", "prose_json")


def test_raw_string_replies_are_sent_verbatim(realistic: LocalOpenAIServer) -> None:
    realistic.responder = lambda info: "I cannot judge this."
    realistic.quirks = {"judge-q": QUIRKS}
    choice = ask(realistic, "judge-q", "AspectVerdict", "json_object")
    assert choice["message"]["content"] == "I cannot judge this."
    assert realistic.requests[-1].quirks == ()


def test_a_truncated_reply_cuts_the_quirky_text(realistic: LocalOpenAIServer) -> None:
    realistic.quirks = {"judge-q": ("fenced_json",)}
    realistic.faults = "truncated"
    choice = ask(realistic, "judge-q", "ClaimList", "json_schema")
    full = f"```json\n{dumps(CLEAN['ClaimList'])}\n```"
    assert choice["finish_reason"] == "length"
    assert choice["message"]["content"] == full[: len(full) // 2]
    entry = realistic.requests[-1]
    assert (entry.fault, entry.quirks) == ("truncated", ("fenced_json",))


def test_embeddings_are_never_quirky(realistic: LocalOpenAIServer) -> None:
    realistic.quirks = {"emb": QUIRKS}
    response = client(realistic.base_url).embeddings.create(model="emb", input=["a & <b>"])
    assert len(response.data[0].embedding) == realistic.embedding_dim
    assert realistic.requests[-1].quirks == ()


# --------------------------------------------------------------------------- configuration


def test_quirks_can_be_reassigned_while_running(realistic: LocalOpenAIServer) -> None:
    realistic.quirks = {"judge-q": ("fenced_json",)}
    assert ask(realistic, "judge-q", "ClaimList", "json_object")["message"]["content"].startswith(
        "```json\n"
    )
    realistic.quirks = {"judge-q": ["prose_json"]}
    assert realistic.quirks == {"judge-q": ("prose_json",)}
    assert ask(realistic, "judge-q", "ClaimList", "json_object")["message"]["content"].startswith(
        "Here is the JSON"
    )
    realistic.quirks = None
    assert realistic.quirks == {}
    choice = ask(realistic, "judge-q", "ClaimList", "json_object")
    assert choice["message"]["content"] == dumps(CLEAN["ClaimList"])
    assert [entry.quirks for entry in realistic.requests] == [
        ("fenced_json",),
        ("prose_json",),
        (),
    ]


def test_unknown_quirks_are_refused_at_construction() -> None:
    with pytest.raises(ValueError, match=r"unknown quirk 'fenced' for model 'judge-q'") as error:
        LocalOpenAIServer(quirks={"judge-q": ("fenced",)})
    for known in QUIRKS:
        assert known in str(error.value)
    with pytest.raises(TypeError, match="map model names"):
        LocalOpenAIServer(quirks=("fenced_json",))  # type: ignore[arg-type]


def test_an_unknown_quirk_assigned_later_keeps_the_old_table(
    realistic: LocalOpenAIServer,
) -> None:
    realistic.quirks = {"judge-q": "think_json"}  # one name, not its characters
    assert realistic.quirks == {"judge-q": ("think_json",)}
    with pytest.raises(ValueError, match="unknown quirk 'Think_json'"):
        realistic.quirks = {"judge-q": ("Think_json",)}
    assert realistic.quirks == {"judge-q": ("think_json",)}


# --------------------------------------------------------------------------- through ChatOpenAI


def chat_model(server: LocalOpenAIServer, model: str) -> ChatOpenAI:
    return ChatOpenAI(
        base_url=server.base_url,
        api_key="sk-test",
        model=model,
        use_responses_api=False,
        max_retries=0,
    )


def test_invalid_tool_arguments_land_in_invalid_tool_calls(realistic: LocalOpenAIServer) -> None:
    realistic.quirks = {"judge-q": ("invalid_tool_arguments",)}
    llm = chat_model(realistic, "judge-q").bind_tools([ClaimVerdicts], tool_choice="ClaimVerdicts")
    message = llm.invoke(PROMPTS["ClaimVerdicts"])
    assert isinstance(message, AIMessage)
    assert message.tool_calls == []
    (invalid,) = message.invalid_tool_calls
    assert invalid["name"] == "ClaimVerdicts"
    assert invalid["args"] == f"```json\n{dumps(CLEAN['ClaimVerdicts'])}\n```"


def test_realistic_judge_through_chat_openai(realistic: LocalOpenAIServer) -> None:
    realistic.responder = heuristic_responder
    realistic.quirks = {"judge-real": REALISTIC}
    for schema in ("ClaimList", "ClaimVerdicts"):
        llm = chat_model(realistic, "judge-real").bind_tools([PYDANTIC[schema]], tool_choice=schema)
        message = llm.invoke(PROMPTS[schema])
        assert isinstance(message, AIMessage)
        assert isinstance(message.content, str)
        assert message.content.startswith("<think>\n")
        assert message.tool_calls == [] and message.invalid_tool_calls == []
        clean = (
            chat_model(realistic, "judge-a")
            .bind_tools([PYDANTIC[schema]], tool_choice=schema)
            .invoke(PROMPTS[schema])
        )
        assert isinstance(clean, AIMessage)
        assert recover(message.content, schema) == recover(
            dumps(clean.tool_calls[0]["args"]), schema
        )
    assert [entry.quirks for entry in realistic.requests] == [
        ("claim_objects", "think_json", "ignore_tools", "echo_escaping"),
        (),
        ("capitalised_labels", "index_all_one", "think_json", "ignore_tools", "echo_escaping"),
        (),
    ]
