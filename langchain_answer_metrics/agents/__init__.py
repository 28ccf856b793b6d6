"""Agents as data: what an agent did, what it should have done, and the view the agent
metrics read.

The API (everything below is importable from ``langchain_answer_metrics.agents``;
``AgentSample`` also from the package root):

- ``AgentSample(messages=..., reference_tool_calls=None, reference_messages=None,
  user_input=None, reference=None)``: a :class:`~langchain_answer_metrics.core.sample.Sample`
  (``response`` is the final answer). ``messages`` in any form: LangChain messages,
  OpenAI chat dicts, or a mapping with a ``messages`` key; normalised to
  ``list[AgentMessage]`` when built. ``reference_tool_calls``: ``{"name", "args"}`` or
  OpenAI ``function`` dicts; a nested list is a group of parallel calls. Both references
  at once is refused. ``user_input`` defaults to the first human message.
  ``AgentSample.from_langgraph(graph, config, **fields)`` reads a LangGraph thread.
- The normalised view: ``sample.tool_calls`` (the agent's calls) and
  ``sample.expected_tool_calls`` (None without a reference): ``list[TrajectoryCall]``,
  each with ``call`` (a ``ToolCall``: ``name``, ``args`` dict or None, ``arguments_text``
  when the arguments were not a JSON object, ``id``, ``render()``), ``position`` (0-based
  among the calls), ``message_index`` (the AI message that made it), ``group`` (its
  parallel group: calls of one group have no order) and ``result`` (its tool's reply,
  joined by ``tool_call_id``). ``sample.final_answer``: the last AI message's text if it
  made no call. ``sample.messages``: ``AgentMessage(role, content, tool_calls,
  tool_call_id, name)``, role one of system, user, assistant, tool.
- ``check_agent_sample(metric, value, *, needs_expected=False, max_chars=...)``: how a
  metric reads its input (an ``AgentSample``, a dict of its fields, a dataset row),
  raising ``InvalidSampleError(metric, field, problem)`` before any request
  (``messages[2].tool_calls[0].function.name``, ``reference_tool_calls``).

    >>> AgentSample(messages=[{"role": "user", "content": "Hi"}]).user_input
    'Hi'

The modules, one job each: ``calls.py`` reads a tool call (and the expected calls),
``messages.py`` reads the three message forms, ``trajectory.py``
gives the calls in order with their groups and results, ``sample.py`` holds the sample and
the check a metric runs on its input, ``matching.py`` compares and matches calls,
``langgraph.py`` reads a LangGraph thread (LangGraph imported there, when asked).
"""

from langchain_answer_metrics.agents.calls import MessageFormError, ToolCall
from langchain_answer_metrics.agents.messages import AgentMessage
from langchain_answer_metrics.agents.sample import AGENT_FIELDS, AgentSample, check_agent_sample
from langchain_answer_metrics.agents.trajectory import TrajectoryCall

__all__ = [
    "AGENT_FIELDS",
    "AgentMessage",
    "AgentSample",
    "MessageFormError",
    "ToolCall",
    "TrajectoryCall",
    "check_agent_sample",
]
