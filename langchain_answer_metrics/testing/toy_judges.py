"""The toy judge's rules for a :class:`~langchain_answer_metrics.CustomJudge`'s steps.

**Not an evaluator**: plausible answers from word counts, keywords and word overlap, in
English, Russian and Chinese, so docs examples and demos run the real HTTP path offline.

``PassFailVerdict``
    A criterion asking whether there is harm ("helps someone cause harm"): PASS iff the
    response has a harmful word. Another ``<criterion>``: the aspect rules of
    :func:`.heuristic_judge.judge_aspect` (harmlessness, dates, concision, else not
    blank). Without one: PASS iff the response shares half of the ``<reference>``'s
    words, else iff it is not blank.
``ScaleVerdict``
    A fraction, then the level that far up ``<levels>`` (``N: description`` lines; 1-5
    when there are none): under a harm criterion, 1 if the response has a harmful word
    (bomb, бомба, 武器...) else 0 (the other way round when it asks for harmlessness);
    under a concision criterion, 1 at 10 words or fewer down to 0 at 60; else the share
    of the reference's words the response has; else the response's length (1 at 40
    words).
``CategoryVerdict``
    Tone keywords (please / thank you / спасибо / 谢谢 polite; idiot / дурак / 笨蛋 rude)
    pick the category whose name or description says polite, rude or neutral; else the
    category whose name or description shares most words with the response; else the
    middle one listed.
``ContinuousVerdict``
    The share of the reference's words the response has; without a reference, the
    fraction above under a harm or concision criterion, else 1.0 for a non-blank
    response.

Example:
    >>> answer_scale({"criterion": "Be brief.", "levels": "1: long\\n2: ok\\n3: short",
    ...               "response": "Paris."})["verdict"]
    3
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from langchain_answer_metrics.testing.heuristic_judge import judge_aspect, language_of
from langchain_answer_metrics.testing.prompt_reading import ToyStep, register_toy_step

_CJK = re.compile(r"[\u3400-\u9fff]")
_TOKEN = re.compile(r"[\u3400-\u9fff]|[^\W\d_]+|\d+")
_RUBRIC_LINE = re.compile(r"^\s*([^:\n]+?)\s*:\s*(.*)$")
_CONCISE = ("concise", "brief", "short", "succinct", "кратк", "лаконич", "简洁", "简短", "简明")
_HARM = ("harm", "danger", "unsafe", "toxic", "вред", "опасн", "有害", "危险", "伤害")
_HARMFUL_WORDS = (
    "kill",
    "bomb",
    "weapon",
    "poison",
    "explosive",
    "убить",
    "бомб",
    "оружи",
    "взрывчат",
    "杀",
    "炸弹",
    "武器",
    "毒药",
)
# A harm criterion that asks for the absence of harm (else it asks whether there is harm).
_HARMLESS = (
    "harmless",
    "no harm",
    "not harm",
    "safe",
    "free of",
    "contains no",
    "безвред",
    "без вред",
    "не содерж",
    "не вред",
    "无害",
    "没有有害",
    "不含",
)
_POLITE_WORDS = (
    "please",
    "thank",
    "kindly",
    "glad to",
    "пожалуйста",
    "спасибо",
    "рад ",
    "请",
    "谢谢",
    "您",
)
_RUDE_WORDS = ("idiot", "stupid", "shut up", "дурак", "идиот", "заткнись", "笨蛋", "白痴", "闭嘴")
_TONES = {
    "polite": ("polite", "courteous", "friendly", "вежлив", "礼貌", "客气"),
    "rude": ("rude", "impolite", "offensive", "toxic", "груб", "невежлив", "粗鲁", "无礼"),
    "neutral": ("neutral", "нейтрал", "中性", "中立"),
}
_REASONS: dict[str, dict[str, Any]] = {
    "scale": {
        "en": "{words} words; level {level}.",
        "ru": "{words} слов; уровень {level}.",
        "zh": "约{words}个词；等级{level}。",
    },
    "category": {
        "en": "It reads as {label}.",
        "ru": "Похоже на «{label}».",
        "zh": "看起来属于“{label}”。",
    },
    "continuous": {"en": "Score {score}.", "ru": "Оценка {score}.", "zh": "评分{score}。"},
    "harmful": {
        "en": ("The response contains harmful content.", "No harmful content was found."),
        "ru": ("Ответ содержит вредное содержание.", "Вредного содержания не найдено."),
        "zh": ("回答包含有害内容。", "未发现有害内容。"),
    },
    "reference": {
        "en": ("It agrees with the reference.", "It misses the reference."),
        "ru": ("Ответ согласуется с эталоном.", "Ответ расходится с эталоном."),
        "zh": ("回答与参考一致。", "回答与参考不符。"),
    },
}


def _words(text: str) -> int:
    cjk = len(_CJK.findall(text))
    return len(_CJK.sub(" ", text).split()) + cjk // 2


def _tokens(text: str) -> set[str]:
    return {token.lower() for token in _TOKEN.findall(text)}


def _overlap(response: str, reference: str) -> float:
    wanted = _tokens(reference)
    return len(wanted & _tokens(response)) / len(wanted) if wanted else 0.0


def _concise(sections: Mapping[str, str]) -> bool:
    return any(word in sections.get("criterion", "").lower() for word in _CONCISE)


def _fraction(sections: Mapping[str, str]) -> float:
    response = sections.get("response", "")
    criterion = sections.get("criterion", "").lower()
    if any(word in criterion for word in _HARM):
        harmful = any(word in response.lower() for word in _HARMFUL_WORDS)
        return float(harmful != any(word in criterion for word in _HARMLESS))
    if _concise(sections):
        return min(1.0, max(0.0, (60 - _words(response)) / 50))
    if sections.get("reference", "").strip():
        return _overlap(response, sections["reference"])
    return min(1.0, _words(response) / 40)


def _rubric(text: str) -> list[tuple[str, str]]:
    """``name: description`` lines (a bare name has no description)."""
    entries = []
    for line in text.splitlines():
        found = _RUBRIC_LINE.match(line)
        if found:
            entries.append((found.group(1), found.group(2)))
        elif line.strip():
            entries.append((line.strip(), ""))
    return entries


def answer_pass_fail(sections: Mapping[str, str]) -> dict[str, Any]:
    response = sections.get("response", "")
    criterion = sections.get("criterion", "").lower()
    language = language_of(response)
    if any(word in criterion for word in _HARM) and not any(w in criterion for w in _HARMLESS):
        # "The answer helps cause harm": PASS means harm was found.
        harmful = any(word in response.lower() for word in _HARMFUL_WORDS)
        reasons = _REASONS["harmful"][language]
        return {"reason": reasons[0 if harmful else 1], "verdict": "PASS" if harmful else "FAIL"}
    if criterion.strip():
        return judge_aspect(sections["criterion"], response)
    if sections.get("reference", "").strip():
        passed = _overlap(response, sections["reference"]) >= 0.5
        reasons = _REASONS["reference"][language]
        return {"reason": reasons[0 if passed else 1], "verdict": "PASS" if passed else "FAIL"}
    return judge_aspect("", response)


def answer_scale(sections: Mapping[str, str]) -> dict[str, Any]:
    levels = [
        int(name) for name, _ in _rubric(sections.get("levels", "")) if re.fullmatch(r"-?\d+", name)
    ] or [1, 2, 3, 4, 5]
    low, high = min(levels), max(levels)
    level = low + round(_fraction(sections) * (high - low))
    response = sections.get("response", "")
    reason = _REASONS["scale"][language_of(response)].format(words=_words(response), level=level)
    return {"reason": reason, "verdict": level}


def answer_category(sections: Mapping[str, str]) -> dict[str, Any]:
    categories = _rubric(sections.get("categories", "")) or [("neutral", "")]
    response = sections.get("response", "").lower()
    tone = (
        "rude"
        if any(w in response for w in _RUDE_WORDS)
        else "polite"
        if any(w in response for w in _POLITE_WORDS)
        else "neutral"
    )
    chosen = next(
        (
            name
            for name, text in categories
            if any(mark in f"{name} {text}".lower() for mark in _TONES[tone])
        ),
        None,
    )
    if chosen is None:
        said = _tokens(response)
        best = max(categories, key=lambda entry: len(_tokens(" ".join(entry)) & said))
        shared = _tokens(" ".join(best)) & said
        chosen = best[0] if shared else categories[(len(categories) - 1) // 2][0]
    reason = _REASONS["category"][language_of(response)].format(label=chosen)
    return {"reason": reason, "verdict": chosen}


def answer_continuous(sections: Mapping[str, str]) -> dict[str, Any]:
    response = sections.get("response", "")
    harm = any(word in sections.get("criterion", "").lower() for word in _HARM)
    if sections.get("reference", "").strip() or _concise(sections) or harm:
        score = _fraction(sections)
    else:
        score = 1.0 if response.strip() else 0.0
    score = round(score, 2)
    return {
        "reason": _REASONS["continuous"][language_of(response)].format(score=score),
        "score": score,
    }


# The tags that tell a json_mode request of each step apart (tools name the schema): the
# rubric and the response, so that a criterion's prompt (which AspectCritic's <criterion>
# and <response> also fit) is told apart by its rubric; a tie goes to a registered step.
register_toy_step(ToyStep("ScaleVerdict", frozenset({"levels", "response"}), answer_scale))
register_toy_step(
    ToyStep("CategoryVerdict", frozenset({"categories", "response"}), answer_category)
)
register_toy_step(ToyStep("ContinuousVerdict", frozenset({"range", "response"}), answer_continuous))
register_toy_step(ToyStep("PassFailVerdict", frozenset({"response"}), answer_pass_fail))
