"""The toy judge's rules for the conversation steps: plausible answers on easy cases,
never judgments. They live beside the steps (:mod:`.conversation`), so the toy judge
(``answer-metrics toy-judge``, the local test server) answers them with no edit in
``testing/``.

Each rule reads the prompt's data sections (un-escaped, by tag name) and the thread's
numbered turn blocks, and answers for the turns shown whole:

- retention: a reply that asks again for something of a kind the user already gave (a
  name, a city, a budget, an allergy, a diet) is a lapse;
- role: a reply holding a word the role forbids (after "never", "do not", "не",
  "不要" ...) violates it, unless it declines;
- completeness: each user message is a request (greetings aside), satisfied when a reply
  from its turn on answers without declining or only asking back;
- topics: a request is on topic when it shares a word stem with a topic; it was
  declined when the reply holds a refusal phrase.

    >>> retention({"conversation": "Turn 1\\n  user: I live in Lyon.\\n  assistant: Hi!\\n"
    ...            "Turn 2\\n  user: A restaurant?\\n  assistant: Which city are you in?"})
    {'verdicts': [{'index': 2, 'reason': 'Turn 2 asks again for the city, given in turn 1.',
                   'verdict': 'lapse'}]}
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_TURN = re.compile(r"^Turn (\d+)( \(shown in part\))?$", re.MULTILINE)
_CJK = re.compile(r"[\u3400-\u9fff]")

# Kinds of things a user tells about themselves: words that give one, words that ask it.
_KINDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "name": (
        ("my name", "i'm ", "i am ", "зовут", "我叫", "名字"),
        ("your name", "как вас зовут", "ваше имя", "你叫什么", "名字"),
    ),
    "city": (
        ("live in", "i'm in", "живу", "我住在", "我在"),
        (
            "which city",
            "what city",
            "where are you",
            "где вы",
            "в каком городе",
            "哪个城市",
            "你在哪",
        ),
    ),
    "budget": (
        ("budget", "up to", "бюджет", "до ", "预算"),
        ("budget", "how much", "бюджет", "сколько", "预算"),
    ),
    "allergy": (
        ("allergic", "allergy", "аллерги", "过敏"),
        ("allergic", "allergies", "аллерги", "过敏"),
    ),
    "diet": (
        ("vegetarian", "vegan", "вегетариан", "素食"),
        ("do you eat meat", "vegetarian", "едите мясо", "吃肉"),
    ),
}
_REFUSALS = (
    "sorry",
    "can't help",
    "cannot help",
    "only help",
    "only answer",
    "not able to",
    "извините",
    "не могу",
    "только на вопрос",
    "抱歉",
    "无法",
    "只能",
)
_GREETINGS = ("hi", "hello", "thanks", "thank you", "привет", "спасибо", "你好", "谢谢")
_NEGATIONS = re.compile(
    r"(?:never|do not|don't|не|никогда|不要|禁止|不能)\s*(.+?)(?:[.!;。]|$)", re.IGNORECASE
)


@dataclass
class _Block:
    index: int
    whole: bool
    user: str
    reply: str


def _blocks(text: str) -> list[_Block]:
    heads = list(_TURN.finditer(text))
    blocks = []
    for position, head in enumerate(heads):
        end = heads[position + 1].start() if position + 1 < len(heads) else len(text)
        body = text[head.end() : end]
        user = re.search(r"^  user: (.*?)(?=^  \S|\Z)", body, re.MULTILINE | re.DOTALL)
        reply = re.search(r"^  assistant: (.*?)(?=^  \S|\Z)", body, re.MULTILINE | re.DOTALL)
        blocks.append(
            _Block(
                index=int(head.group(1)),
                whole=head.group(2) is None,
                user=" ".join((user.group(1) if user else "").split()),
                reply=" ".join((reply.group(1) if reply else "").split()),
            )
        )
    return blocks


def _stems(text: str) -> set[str]:
    words = {word[:5] for word in re.findall(r"[^\W\d_]{4,}", text.lower())}
    return words | set(_CJK.findall(text))


def _declines(reply: str) -> bool:
    lowered = reply.lower()
    return any(marker in lowered for marker in _REFUSALS)


def retention(sections: Mapping[str, str]) -> dict[str, Any]:
    """Kept or lapse for each whole turn after the thread's first."""
    blocks = _blocks(sections.get("conversation", ""))
    first = blocks[0].index if blocks else 1
    verdicts = []
    for position, block in enumerate(blocks):
        if not block.whole or block.index == first:
            continue
        told = " ".join(earlier.user.lower() for earlier in blocks[:position])
        asked = block.reply.lower() if "?" in block.reply or "？" in block.reply else ""
        lapse = next(
            (
                kind
                for kind, (gives, asks) in _KINDS.items()
                if any(g in told for g in gives) and any(a in asked for a in asks)
            ),
            None,
        )
        if lapse is None:
            reason, verdict = f"Turn {block.index} asks for nothing the user already said.", "kept"
        else:
            said = next(
                e.index
                for e in blocks[:position]
                if any(g in e.user.lower() for g in _KINDS[lapse][0])
            )
            reason = f"Turn {block.index} asks again for the {lapse}, given in turn {said}."
            verdict = "lapse"
        verdicts.append({"index": block.index, "reason": reason, "verdict": verdict})
    return {"verdicts": verdicts}


def role(sections: Mapping[str, str]) -> dict[str, Any]:
    """Adheres or violates, for each whole turn."""
    forbidden = set()
    for match in _NEGATIONS.finditer(sections.get("role", "")):
        forbidden |= _stems(match.group(1))
    verdicts = []
    for block in _blocks(sections.get("conversation", "")):
        if not block.whole:
            continue
        broken = sorted(forbidden & _stems(block.reply)) if not _declines(block.reply) else []
        if broken:
            reason = f"Turn {block.index} does what the role forbids ({', '.join(broken[:3])})."
        else:
            reason = f"Turn {block.index} stays within the role."
        verdicts.append(
            {"index": block.index, "reason": reason, "verdict": "violates" if broken else "adheres"}
        )
    return {"verdicts": verdicts}


def completeness(sections: Mapping[str, str]) -> dict[str, Any]:
    """Each user request (greetings aside), satisfied or not by a reply from its turn on."""
    blocks = _blocks(sections.get("conversation", ""))
    intents = []
    for position, block in enumerate(blocks):
        words = block.user.lower().strip(" !.?,")
        if not words or words in _GREETINGS:
            continue
        answering = [
            b
            for b in blocks[position:]
            if b.reply and not _declines(b.reply) and not b.reply.rstrip().endswith(("?", "？"))
        ]
        met = answering[0].index if answering else None
        reason = f"Turn {met} answers it." if met is not None else "No later turn answers it."
        intents.append(
            {
                "turn": block.index,
                "intent": block.user[:200],
                "reason": reason,
                "verdict": "satisfied" if met is not None else "unsatisfied",
            }
        )
    return {"intents": intents}


def topics(sections: Mapping[str, str]) -> dict[str, Any]:
    """On or off topic, answered or declined, for each whole turn."""
    topic_stems = _stems(re.sub(r"^\s*\d+\.\s*", "", sections.get("topics", ""), flags=re.M))
    verdicts = []
    for block in _blocks(sections.get("conversation", "")):
        if not block.whole:
            continue
        on_topic = bool(topic_stems & _stems(block.user))
        handling = "declined" if _declines(block.reply) else "answered"
        verdicts.append(
            {
                "index": block.index,
                "reason": f"Turn {block.index}'s request is {'on' if on_topic else 'off'} topic "
                f"and was {handling}.",
                "verdict": "on_topic" if on_topic else "off_topic",
                "handling": handling,
            }
        )
    return {"verdicts": verdicts}
