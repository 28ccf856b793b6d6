"""Conversations as data: a thread cut into assistant turns, with the role, the goal and
the topics the conversation metrics judge it against.

``ConversationSample`` (also at the package root) takes the thread in the forms an
``AgentSample`` does (LangChain messages, OpenAI chat dicts, a ``{"messages": ...}``
mapping); ``turns.py`` cuts it into :class:`Turn` s; ``sources.py`` reads a thread from a
LangGraph checkpointer or a LangSmith thread.

    >>> ConversationSample(messages=[{"role": "user", "content": "Hi"},
    ...                              {"role": "assistant", "content": "Hello!"}]).turns[0].index
    1
"""

from langchain_answer_metrics.conversations.sample import (
    CONVERSATION_FIELDS,
    ConversationSample,
    check_conversation_sample,
)
from langchain_answer_metrics.conversations.turns import Thread, Turn, split_turns

__all__ = [
    "CONVERSATION_FIELDS",
    "ConversationSample",
    "Thread",
    "Turn",
    "check_conversation_sample",
    "split_turns",
]
