"""A toy, deterministic, offline "judge" that answers the package's judge prompts by rules.

**This is not an evaluator.** It exists so demos, tests and benchmarks can run the real
prompt -> structured output -> metric path without a network or a model. Its verdicts come
from word overlap and keyword lists and are only right on easy cases. It is pure,
deterministic (same prompt, same answer, in any process) and cheap, so it is usable at
10k-sample benchmark scale.

Usage::

    from langchain_answer_metrics.testing.heuristic_judge import respond

    respond("ClaimList", [{"role": "user", "content": "<text>\\nA. B.\\n</text>"}])
    # -> {"claims": [...]}

The rules, per schema:

``ClaimList``
    The ``<text>`` section split into sentences (``.!?`` followed by a space, CJK
    ``。！？；`` anywhere, and line breaks); list bullets are stripped and fragments with
    fewer than two words (or three CJK characters) are dropped. Claims keep their language.
    A sentence that declines to answer asserts nothing and is dropped too (see
    :func:`is_abstention`): it contains a phrase of ``_ABSTENTION_PHRASES`` such as "I don't
    know", "cannot find ... in the documents", "не знаю", "в контексте нет ответа",
    "不知道", "上下文中没有答案" (lowercased, ’ read as '). So "I don't know." gives no
    claims at all, and "I don't know. It opened in 1889." gives one. A short answer with a
    ``<question>`` ("Paris") is one claim (see :func:`decompose`); a verification's
    ``<question>`` is read as the start of its source.

``ClaimVerdicts``
    Each numbered claim of ``<claims>`` against ``<source>``. Tokens are lowercased words
    (crudely stemmed: a trailing English "s" is dropped, Cyrillic words are cut to five
    letters) minus stopwords, plus character bigrams of CJK runs. *Key tokens* are numbers
    and capitalised words. The best-matching source sentence is the one sharing the most
    claim tokens.

    - ``contradicted``: the best sentence shares at least half of the claim's tokens and
      either (a) the claim has a key token absent from the source while the best sentence
      has a key token of the same kind (number / name) absent from the claim - "born in
      Spain" vs "born in Germany" - or (b) exactly one of the two is negated (not, не,
      不是, 没有 ...) and the sentence shares 75% of the claim's tokens. Names are only
      recognised in cased scripts, so Chinese contradictions are found only by numbers.
    - ``supported``: at least 75% of the claim's tokens occur in the source and every key
      token does.
    - ``neutral``: anything else.

``AspectVerdict``
    Keyword rules on ``<criterion>``, first match wins:

    1. harm (harm, dangerous, вред, опасн, 有害, 危险 ...): FAIL iff the response contains a
       word from a small list of harmful words (bomb, weapon, poison, бомба, 武器 ...).
    2. dates (date, year, when, дата, год, когда, 日期, 年 ...): PASS iff the response
       contains a 3-4 digit number.
    3. concision (concise, brief, short, кратк, лаконич, 简洁, 简短 ...): PASS iff the
       response is under 60 words (two CJK characters count as one word).
    4. otherwise: PASS iff the response is not blank.

Reasons are written in the language of the claim / response (English, Russian or Chinese).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any, Literal

from langchain_answer_metrics.testing.prompt_reading import prompt_sections, toy_steps

# CJK ideographs, kana and hangul: scripts written without spaces between words.
_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"
_CJK_RUN_RE = re.compile(f"[{_CJK}]+")
# A token is a CJK run, a number (with inner separators: 3.14, 1,000) or a run of letters.
_TOKEN_RE = re.compile(rf"[{_CJK}]+|\d+(?:[.,]\d+)*|[^\W\d_{_CJK}]+")
_NUMBER_RE = re.compile(r"\d+(?:[.,]\d+)*")
_YEARISH_RE = re.compile(r"(?<!\d)\d{3,4}(?!\d)")
# Degrees written as symbols read as the words a paraphrase uses ("100 °C" is "100 degrees
# Celsius"), so a unit is neither a missing fact nor a different name.
_DEGREES = {"C": " Celsius", "F": " Fahrenheit"}
_DEGREES_RE = re.compile(r"\s?°\s?([CF])\b")
# A unit's abbreviation after a number reads as its word ("1642 м" is "1642 метров").
_UNITS = {"м": "метров", "км": "километров", "m": "metres", "km": "kilometres"}
_UNIT_RE = re.compile(r"(?<=\d)\s?(км|м|km|m)\b")
# Where a sentence starts: its first word is capitalised for that reason alone.
_SENTENCE_START_RE = re.compile(r"(?:^|[.!?…]\s+)[\W\d_]*$")
# Clause marks of CJK text, where a substitution is looked for clause by clause.
_CJK_CLAUSE_RE = re.compile(r"[，、；：,;:]")

# Sentence ends: Latin/Cyrillic punctuation needs following whitespace (so "3.14" and
# "e.g.x" stay whole); CJK punctuation ends a sentence wherever it is.
_SENTENCE_END_RE = re.compile(r"(?<=[.!?…])\s+|(?<=[。！？；])\s*")
_BULLET_RE = re.compile(r"^\s*(?:[-*•·]|\d{1,3}[.)]|[a-zA-Z][.)])\s+")
_NUMBERED_RE = re.compile(r"^\s*(\d+)[.)]\s*(.*)$")

# Space-separated for readability; function words that carry no claim content.
_STOPWORD_TEXT = """
a an the and or but if of to in on at by for from with as into onto about over under
is are was were be been being am do does did has have had will would shall should can
could may might must this that these those it its he she they them his her their
we our you your i me my there here which who whom whose what when where how than then
also very just so such not no only
и в во на с со к ко по о об от до из за у же ли бы был была было были быть это этот эта
эти тот та те то он она оно они его её ее их а но или что как так также для при под над
не ни нет кто где когда какой какая какое какие каков сколько почему зачем куда откуда чей
около примерно приблизительно является являются находится расположен расположена
approximately roughly nearly located situated
"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_NEGATIONS = frozenset(["not", "no", "never", "none", "nobody", "не", "нет", "никогда"])
_CJK_NEGATIONS = ("不是", "没有", "并非", "从未")

_HARM_CRITERION = ("harm", "danger", "unsafe", "toxic", "вред", "опасн", "有害", "危险", "伤害")
_DATE_CRITERION = ("date", "year", "when", "дат", "год", "когда", "日期", "年", "时间")
_CONCISE_CRITERION = (
    "concise",
    "brief",
    "short",
    "succinct",
    "кратк",
    "лаконич",
    "简洁",
    "简短",
    "简明",
)
_HARMFUL_WORDS = (
    "kill",
    "bomb",
    "weapon",
    "poison",
    "explosive",
    "убить",
    "убей",
    "бомб",
    "оружи",
    "яд ",
    "взрывчат",
    "杀",
    "炸弹",
    "武器",
    "毒药",
)
_CONCISE_WORD_LIMIT = 60
# Phrases that decline to answer, in English, Russian and Chinese; a sentence with one
# asserts nothing. Regexes over the lowercased sentence (’ read as ').
_ABSTENTION_PHRASES = (
    r"\bi (?:do not|don't|dont) know\b",
    r"\b(?:i|we) (?:cannot|can't|could not|couldn't|am unable to|was unable to) "
    r"(?:find|answer|say|tell|determine)\b",
    r"\b(?:cannot|unable to) (?:be )?answer(?:ed)?\b",
    r"\bnot (?:in|mentioned in|found in|covered by) the (?:provided |given )?"
    r"(?:documents?|context|sources?)\b",
    r"\bthe (?:provided |given )?(?:documents?|context|sources?) (?:do|does) not "
    r"(?:say|mention|contain|state|answer)\b",
    r"\bno answer\b",
    r"не знаю",
    r"нет ответа",
    r"не могу (?:ответить|найти|сказать)",
    r"не удалось найти",
    r"нет (?:информации|сведений|данных) об? ",
    r"不知道",
    r"没有答案",
    r"无法回答",
    r"找不到",
    r"没有找到",
    r"没有相关信息",
    r"无法确定",
)
_ABSTENTIONS = re.compile("|".join(_ABSTENTION_PHRASES))

Language = Literal["en", "ru", "zh"]


# --------------------------------------------------------------------------- text helpers


def language_of(text: str) -> Language:
    """A crude script-based language guess: Chinese, Russian or English."""
    if _CJK_RUN_RE.search(text):
        return "zh"
    if re.search(r"[\u0400-\u04ff]", text):
        return "ru"
    return "en"


def is_abstention(sentence: str) -> bool:
    """Whether ``sentence`` declines to answer ("I don't know", "В контексте нет
    ответа", "上下文中没有答案"): it asserts nothing, so it is no claim."""
    return bool(_ABSTENTIONS.search(sentence.lower().replace("\u2019", "'")))


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``, bullets stripped, very short fragments dropped."""
    sentences = []
    for line in text.splitlines():
        line = _BULLET_RE.sub("", line).strip()
        for piece in _SENTENCE_END_RE.split(line):
            piece = piece.strip()
            if piece and _is_substantial(piece):
                sentences.append(piece)
    return sentences


def _is_substantial(fragment: str) -> bool:
    cjk_chars = sum(len(run) for run in _CJK_RUN_RE.findall(fragment))
    words = len(_TOKEN_RE.findall(_CJK_RUN_RE.sub(" ", fragment)))
    return words >= 2 or cjk_chars >= 3 or (cjk_chars >= 1 and words >= 1)


def _stem(word: str) -> str:
    # Just enough morphology for the demo cases: "Германии"/"Германия" -> "герма",
    # "years"/"year" -> "year". Real stemming is out of scope for a toy judge.
    if "\u0400" <= word[0] <= "\u04ff" and len(word) > 5:
        return word[:5]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


class _Tokens:
    """Content tokens of a text, and which of them are numbers or names."""

    __slots__ = ("all", "names", "negated", "numbers")

    def __init__(self, text: str) -> None:
        self.all: set[str] = set()
        self.numbers: set[str] = set()
        self.names: set[str] = set()
        text = _DEGREES_RE.sub(lambda unit: _DEGREES[unit.group(1)], _aliased(text))
        text = _UNIT_RE.sub(lambda unit: f" {_UNITS[unit.group(1)]}", text)
        self.negated = any(neg in text for neg in _CJK_NEGATIONS)
        for found in _TOKEN_RE.finditer(text):
            raw = found.group()
            if _CJK_RUN_RE.fullmatch(raw):
                # No spaces between CJK words: character bigrams stand in for words.
                if len(raw) == 1:
                    self.all.add(raw)
                else:
                    self.all.update(raw[i : i + 2] for i in range(len(raw) - 1))
                continue
            lower = raw.lower()
            if lower in _NEGATIONS:
                self.negated = True
            if lower in _STOPWORDS:
                continue
            if _NUMBER_RE.fullmatch(raw):
                token = raw.replace(",", "")
                self.numbers.add(token)
            else:
                token = _stem(lower)
                if _is_name(raw, text[: found.start()]):
                    self.names.add(token)
            self.all.add(token)

    def renamed(self, numbers: Mapping[str, str]) -> _Tokens:
        """These tokens with some numbers spelt as another text spells them."""
        copy = object.__new__(_Tokens)
        copy.all = {numbers.get(token, token) for token in self.all}
        copy.numbers = {numbers.get(token, token) for token in self.numbers}
        copy.names, copy.negated = self.names, self.negated
        return copy


def _is_name(word: str, before: str) -> bool:
    """A capitalised word is a name, unless it only starts a sentence ("Water boils"):
    there an acronym ("NASA") or a word with an inner capital ("McCarthy") still is."""
    if not word[0].isupper():
        return False
    if not _SENTENCE_START_RE.search(before):
        return True
    return (len(word) > 1 and word.isupper()) or any(char.isupper() for char in word[1:])


# Long official names read as their usual short form, so that a paraphrase using either
# is the same fact ("中华人民共和国的首都" is "中国的首都").
_ALIASES = {
    "中华人民共和国": "中国",
    "Российской Федерации": "России",
    "Российская Федерация": "Россия",
}
_ALIAS_RE = re.compile("|".join(map(re.escape, _ALIASES)))


def _aliased(text: str) -> str:
    return _ALIAS_RE.sub(lambda name: _ALIASES[name.group()], text)


def _about(number: str, other: str) -> bool:
    """Whether one number is the other rounded ("about 8849" for 8848.86)."""
    try:
        first, second = float(number), float(other)
    except ValueError:
        return False
    return first != second and (round(first) == second or round(second) == first)


@lru_cache(maxsize=4096)
def _source_index(source: str) -> tuple[tuple[str, _Tokens], ...]:
    # Cached: a verification prompt checks many claims against one source, and benchmarks
    # reuse sources across samples.
    return tuple((sentence, _Tokens(sentence)) for sentence in split_sentences(source))


# --------------------------------------------------------------------------- the judges

_QUESTION_RE = re.compile(r"^(?:what|who|which)\s+(is|was|are|were)\s+(.+?)\s*\?$", re.I)


def decompose(text: str, question: str = "") -> dict[str, Any]:
    """ClaimList arguments: the sentences of ``text`` that do not decline to answer. A
    short answer ("Paris") becomes one claim with its question: "The capital of France
    is Paris." for "What is the capital of France?", else "<question> <answer>"."""
    claims = [sentence for sentence in split_sentences(text) if not is_abstention(sentence)]
    answer, question = text.strip().rstrip("."), question.strip()
    if not claims and answer and question and not is_abstention(answer):
        match = _QUESTION_RE.match(question)
        subject = match and match.group(2)[0].upper() + match.group(2)[1:]
        claims = [f"{subject} {match.group(1)} {answer}." if match else f"{question} {answer}"]
    return {"claims": claims}


def parse_numbered(claims_text: str) -> list[tuple[int, str]]:
    """``[(number, claim)]`` from a "1. ..." list; unnumbered lines continue the claim."""
    claims: list[tuple[int, str]] = []
    for line in claims_text.splitlines():
        match = _NUMBERED_RE.match(line)
        if match:
            claims.append((int(match.group(1)), match.group(2).strip()))
        elif claims and line.strip():
            number, claim = claims[-1]
            claims[-1] = (number, f"{claim} {line.strip()}")
    return claims


_REASONS: dict[str, dict[Language, str]] = {
    "supported": {
        "en": "The source states this.",
        "ru": "Источник это утверждает.",
        "zh": "来源陈述了这一点。",
    },
    "contradicted": {
        "en": "The source states something different.",
        "ru": "Источник утверждает иное.",
        "zh": "来源的说法与此不同。",
    },
    "neutral": {
        "en": "The source does not address this.",
        "ru": "Источник об этом не говорит.",
        "zh": "来源没有提到这一点。",
    },
}


def verify_claim(claim: str, source: str) -> tuple[str, str]:
    """``(verdict, evidence)`` for one claim against a source, by the module's rules."""
    claim_tokens = _Tokens(claim)
    if not claim_tokens.all:
        return "neutral", ""
    sentences = _source_index(source)
    source_numbers = {number for _, tokens in sentences for number in tokens.numbers}
    rounded = {
        number: other
        for number in claim_tokens.numbers - source_numbers
        for other in source_numbers
        if _about(number, other)
    }
    claim_tokens = claim_tokens.renamed(rounded) if rounded else claim_tokens
    best_sentence, best_tokens, best_overlap = "", None, 0
    source_tokens: set[str] = set()
    for sentence, tokens in sentences:
        source_tokens |= tokens.all
        overlap = len(claim_tokens.all & tokens.all)
        if overlap > best_overlap:
            best_sentence, best_tokens, best_overlap = sentence, tokens, overlap
    if best_tokens is None:
        return "neutral", ""

    size = len(claim_tokens.all)
    if best_overlap * 2 >= size:
        missing_numbers = claim_tokens.numbers - source_tokens
        missing_names = claim_tokens.names - source_tokens
        other_numbers = best_tokens.numbers - claim_tokens.all
        other_names = best_tokens.names - claim_tokens.all
        # Negation only counts when the sentence is otherwise a near match, so a passing
        # "not" elsewhere in a long sentence does not flip unrelated claims.
        flipped = claim_tokens.negated != best_tokens.negated and best_overlap * 4 >= size * 3
        if (missing_numbers and other_numbers) or (missing_names and other_names) or flipped:
            return "contradicted", best_sentence
    if _cjk_substitution(claim, best_sentence):
        return "contradicted", best_sentence
    keys = claim_tokens.numbers | claim_tokens.names
    coverage = len(claim_tokens.all & source_tokens) / size
    if keys <= source_tokens and (
        coverage >= 0.75 or (coverage >= 0.5 and _cjk_characters_covered(claim, source))
    ):
        return "supported", best_sentence
    return "neutral", best_sentence


def _cjk_substitution(claim: str, sentence: str) -> bool:
    """Whether a CJK claim is a clause of ``sentence`` with a short span swapped for
    another between two shared ones ("长江在广州附近注入南海" against "在上海附近注入东海"):
    CJK text has no capitalised names, so a different place is found by where it stands."""
    wanted = "".join(_CJK_RUN_RE.findall(_aliased(claim)))
    if len(wanted) < 4:
        return False
    clauses = [sentence, *_CJK_CLAUSE_RE.split(sentence)]
    for clause in clauses:
        given = "".join(_CJK_RUN_RE.findall(_aliased(clause)))
        matcher = difflib.SequenceMatcher(None, wanted, given, autojunk=False)
        shared = sum(block.size for block in matcher.get_matching_blocks())
        if shared * 2 < len(wanted) or shared * 3 < len(given):
            continue
        steps = matcher.get_opcodes()
        for before, (op, i1, i2, j1, j2), after in zip(steps, steps[1:], steps[2:]):
            # A span swapped between two shared ones, of about the same length.
            if op == "replace" and before[0] == after[0] == "equal":
                ours, theirs = i2 - i1, j2 - j1
                if ours <= 4 and theirs <= 4 and abs(ours - theirs) <= 1:
                    return True
    return False


def _cjk_characters_covered(claim: str, source: str) -> bool:
    """Whether nearly every CJK character of the claim is in the source: a paraphrase
    that reorders its words ("中国的首都是北京", "北京是中国的首都") shares few bigrams."""
    wanted = "".join(_CJK_RUN_RE.findall(_aliased(claim)))
    if not wanted:
        return False
    present = set("".join(_CJK_RUN_RE.findall(_aliased(source))))
    return sum(char in present for char in wanted) >= 0.9 * len(wanted)


_SHORT_ANSWER_TOKENS = 3
"""A source of at most this many content tokens ("Paris", "In 1889") is a short answer,
read with its question; a longer one stands on its own (the question's words would blur
its first sentence)."""


def verify(claims_text: str, source: str, question: str = "") -> dict[str, Any]:
    """ClaimVerdicts arguments: one verdict per numbered claim, in order. A question the
    source answers is read as the start of its first sentence ("Paris" answers it)."""
    if question.strip() and len(_Tokens(source).all) <= _SHORT_ANSWER_TOKENS:
        source = f"{question.strip().rstrip('?？')} {source}"
    verdicts = []
    for index, claim in parse_numbered(claims_text):
        verdict, evidence = verify_claim(claim, source)
        verdicts.append(
            {
                "index": index,
                "verdict": verdict,
                "reason": _REASONS[verdict][language_of(claim)],
                "evidence": evidence,
            }
        )
    return {"verdicts": verdicts}


def _has_any(text: str, needles: Iterable[str]) -> bool:
    return any(needle in text for needle in needles)


def _word_count(text: str) -> int:
    cjk_chars = sum(len(run) for run in _CJK_RUN_RE.findall(text))
    return len(_CJK_RUN_RE.sub(" ", text).split()) + cjk_chars // 2


_ASPECT_REASONS: dict[str, dict[Language, tuple[str, str]]] = {
    # rule -> language -> (reason when PASS, reason when FAIL)
    "harm": {
        "en": ("No harmful content was found.", "The response contains harmful content."),
        "ru": ("Вредного содержания не найдено.", "Ответ содержит вредное содержание."),
        "zh": ("未发现有害内容。", "回答包含有害内容。"),
    },
    "date": {
        "en": ("The response gives a year or date.", "The response gives no year or date."),
        "ru": ("Ответ содержит год или дату.", "В ответе нет года или даты."),
        "zh": ("回答给出了年份或日期。", "回答没有给出年份或日期。"),
    },
    "concise": {
        "en": ("The response is short.", "The response is too long."),
        "ru": ("Ответ краткий.", "Ответ слишком длинный."),
        "zh": ("回答很简洁。", "回答太长。"),
    },
    "default": {
        "en": ("The response addresses the criterion.", "The response is empty."),
        "ru": ("Ответ отвечает критерию.", "Ответ пустой."),
        "zh": ("回答符合标准。", "回答为空。"),
    },
}


def judge_aspect(criterion: str, response: str) -> dict[str, Any]:
    """AspectVerdict arguments for a response against a criterion, by keyword rules."""
    wanted = criterion.lower()
    lowered = response.lower() + " "  # so "яд " matches at the very end too
    if _has_any(wanted, _HARM_CRITERION):
        rule, passed = "harm", not _has_any(lowered, _HARMFUL_WORDS)
    elif _has_any(wanted, _DATE_CRITERION):
        rule, passed = "date", bool(_YEARISH_RE.search(response))
    elif _has_any(wanted, _CONCISE_CRITERION):
        rule, passed = "concise", 0 < _word_count(response) < _CONCISE_WORD_LIMIT
    else:
        rule, passed = "default", bool(response.strip())
    reasons = _ASPECT_REASONS[rule][language_of(response or criterion)]
    return {"reason": reasons[0 if passed else 1], "verdict": "PASS" if passed else "FAIL"}


def respond(schema_name: str, messages: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The JSON arguments a judge would return for ``schema_name``, given the prompt.

    ``messages`` are OpenAI-style dicts (``role``, ``content``). Raises ``ValueError`` for
    a schema this judge does not know.
    """
    sections = prompt_sections(messages)
    if schema_name == "ClaimList":
        return decompose(sections.get("text", ""), sections.get("question", ""))
    if schema_name == "ClaimVerdicts":
        return verify(*(sections.get(name, "") for name in ("claims", "source", "question")))
    if schema_name == "AspectVerdict":
        return judge_aspect(sections.get("criterion", ""), sections.get("response", ""))
    registered = toy_steps().get(schema_name)
    if registered is not None:
        return registered.answer(sections)
    raise ValueError(f"heuristic judge has no rule for schema {schema_name!r}")
