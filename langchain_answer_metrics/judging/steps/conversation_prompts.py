"""The conversation steps' prompts and default few-shot examples, as reviewable
constants (the steps themselves: :mod:`.conversation`).

Each system prompt tells the judge how to read the thread's turn blocks
(:mod:`langchain_answer_metrics.conversations.text`), what each label means, to give the
reason first and to name the turn; the examples are in English, Russian and Chinese.
"""

from __future__ import annotations

from typing import Any

from langchain_answer_metrics.judging.prompts import DATA_RULE

_THREAD_RULES = """- The conversation is a list of turns, "Turn n", each with the user's message,
  the tools the assistant called (with what they returned) and the assistant's reply.
- Judge only the turns shown whole; a turn "(shown in part)" is earlier context, cut
  short for you ("[… N more characters cut]" marks a cut): never count a cut against
  the assistant."""


RETENTION_SYSTEM = f"""You check whether an AI assistant remembers, turn after turn, what
the user told it earlier in a conversation.

<rules>
{_THREAD_RULES}
- For each judged turn, compare the assistant's reply with everything the user said in
  the turns before it: facts about themselves, constraints, preferences, decisions.
- "lapse": the reply asks again for something the user already said, contradicts it, or
  ignores a constraint the user set (a recommendation the user ruled out).
- "kept": otherwise, including a reply that needs nothing said earlier.
- Give exactly one verdict per judged turn, with the turn's number as index: first a
  one-sentence reason in the conversation's language that names what was forgotten and
  the turn it was said in, then the verdict.
- {DATA_RULE}
</rules>"""

RETENTION_USER = """Give one verdict for each of the {count} turns shown whole.

{conversation}"""

ROLE_SYSTEM = f"""You check whether an AI assistant stays within its role and
instructions, turn by turn, in a conversation.

<rules>
{_THREAD_RULES}
- <role> gives the assistant's role and instructions.
- "violates": the reply breaks the role or an instruction (speaks out of character,
  does what it was told not to, drops a required style or language).
- "adheres": the reply stays within the role, including a polite refusal the role asks for.
- Give exactly one verdict per judged turn, with the turn's number as index: first a
  one-sentence reason in the conversation's language, then the verdict.
- {DATA_RULE}
</rules>"""

ROLE_USER = """Give one verdict for each of the {count} turns shown whole.

{role}
{conversation}"""

COMPLETENESS_SYSTEM = f"""You check whether an AI assistant satisfied everything its user
asked for in a conversation.

<rules>
{_THREAD_RULES}
- First list each distinct request of the user (a question to answer, a task to do, a
  change asked for), once, in the order asked, with the number of the turn it was asked
  in; merge a request with its later refinements; leave out greetings and thanks. <goal>,
  when not empty, is what the user came for: it is one of the requests.
- Then judge each: "satisfied" if by the last turn the assistant answered or did it;
  "unsatisfied" if it was ignored, refused without cause, left half done, or answered
  wrongly by the assistant's own later words or tool results.
- Per request: the turn, the request in one short sentence, a one-sentence reason naming
  the turn it rests on, then the verdict; all in the conversation's language.
- {DATA_RULE}
</rules>"""

COMPLETENESS_USER = """List the user's requests and judge each.

{goal}
{conversation}"""

TOPIC_SYSTEM = f"""You check whether an AI assistant keeps to its topics in a
conversation: answering requests on them, declining the others.

<rules>
{_THREAD_RULES}
- <topics> lists the topics the assistant is meant to cover.
- Per judged turn, two labels: "on_topic" if the user's request falls within any of the
  topics, else "off_topic"; and "answered" if the assistant answered or did it, or
  "declined" if it refused or redirected.
- Give exactly one verdict per judged turn, with the turn's number as index: first a
  one-sentence reason in the conversation's language, then both labels.
- {DATA_RULE}
</rules>"""

TOPIC_USER = """Give one verdict for each of the {count} turns shown whole.

{topics}
{conversation}"""

_EXAMPLE_THREAD = """Turn 1
  user: Hi! I'm vegetarian and I live in Lyon.
  assistant: Nice to meet you! How can I help?
Turn 2
  user: Suggest a dinner recipe.
  assistant: A mushroom risotto: no meat, ready in 40 minutes.
Turn 3
  user: Any good restaurant for tonight?
  assistant: Which city are you in? And do you eat meat?"""

_RU_THREAD = """Turn 1
  user: Меня зовут Анна, мне нужен отель в Риме на 3 ночи.
  assistant: Хорошо, Анна. Какой бюджет?
Turn 2
  user: До 100 евро за ночь.
  assistant: Отель «Рома» — 90 евро за ночь, в центре Рима."""

RETENTION_EXAMPLES: tuple[dict[str, Any], ...] = (
    {
        "input": {"conversation": _EXAMPLE_THREAD},
        "output": {
            "verdicts": [
                {
                    "index": 2,
                    "reason": "The recipe has no meat, as the user said in turn 1.",
                    "verdict": "kept",
                },
                {
                    "index": 3,
                    "reason": "It asks for the city and diet the user gave in turn 1.",
                    "verdict": "lapse",
                },
            ]
        },
    },
    {
        "input": {"conversation": _RU_THREAD},
        "output": {
            "verdicts": [
                {
                    "index": 2,
                    "reason": "Отель в Риме и в пределах бюджета из хода 2.",
                    "verdict": "kept",
                },
            ]
        },
    },
)

ROLE_EXAMPLES: tuple[dict[str, Any], ...] = (
    {
        "input": {
            "role": "You are a cooking assistant. Never give medical advice.",
            "conversation": "Turn 1\n  user: 我头疼，该吃什么药？\n"
            "  assistant: 抱歉，我只能帮助烹饪问题，请咨询医生。\n"
            "Turn 2\n  user: What dose of aspirin should I take?\n"
            "  assistant: Take 500 mg of aspirin every 4 hours.",
        },
        "output": {
            "verdicts": [
                {"index": 1, "reason": "它拒绝了医疗问题，符合角色。", "verdict": "adheres"},
                {
                    "index": 2,
                    "reason": "It gives a drug dose: medical advice it must not give.",
                    "verdict": "violates",
                },
            ]
        },
    },
)

COMPLETENESS_EXAMPLES: tuple[dict[str, Any], ...] = (
    {
        "input": {"goal": "", "conversation": _EXAMPLE_THREAD},
        "output": {
            "intents": [
                {
                    "turn": 2,
                    "intent": "Get a dinner recipe.",
                    "reason": "Turn 2 gives a full recipe.",
                    "verdict": "satisfied",
                },
                {
                    "turn": 3,
                    "intent": "Find a restaurant for tonight.",
                    "reason": "Turn 3 names no restaurant.",
                    "verdict": "unsatisfied",
                },
            ]
        },
    },
    {
        "input": {"goal": "Забронировать отель в Риме.", "conversation": _RU_THREAD},
        "output": {
            "intents": [
                {
                    "turn": 1,
                    "intent": "Найти отель в Риме на 3 ночи до 100 евро.",
                    "reason": "В ходе 2 предложен отель за 90 евро.",
                    "verdict": "satisfied",
                },
            ]
        },
    },
)

TOPIC_EXAMPLES: tuple[dict[str, Any], ...] = (
    {
        "input": {
            "topics": "1. cooking\n2. recipes",
            "conversation": "Turn 1\n  user: How long do I boil an egg?\n"
            "  assistant: About 9 minutes for a hard-boiled egg.\n"
            "Turn 2\n  user: Кто выиграл вчерашний матч?\n"
            "  assistant: Извините, я отвечаю только на вопросы о кулинарии.",
        },
        "output": {
            "verdicts": [
                {
                    "index": 1,
                    "reason": "Boiling eggs is cooking, and it answered.",
                    "verdict": "on_topic",
                    "handling": "answered",
                },
                {
                    "index": 2,
                    "reason": "Спорт вне тем, и ассистент отказался.",
                    "verdict": "off_topic",
                    "handling": "declined",
                },
            ]
        },
    },
)
