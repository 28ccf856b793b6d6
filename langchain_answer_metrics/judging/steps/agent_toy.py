"""The toy judge's rules for the agent steps, declared beside them (``StepSpec.toy_reply``).

**Not an evaluator.** Plausible verdicts on easy cases, read from the numbered
trajectory text (:mod:`~langchain_answer_metrics.judging.trajectory_text`), in English,
Russian and Chinese, so the docs, the notebook and the tests run the real HTTP path
offline (``answer-metrics toy-judge``):

``judge_agent_goal`` (:func:`toy_goal`)
    FAIL when the trajectory does not end on an assistant message, or its final answer
    declines or reports a failure ("sorry", "cannot", "не могу", "无法"...). With an
    expected outcome: PASS iff the final answer shares at least half of its words
    (Chinese: character pairs). Otherwise PASS.
``judge_trajectory`` / ``judge_trajectory_scale`` (:func:`toy_trajectory`)
    Faults, each at a step: a call repeating an earlier call's tool and arguments; with a
    reference trajectory, a call to a tool the reference never calls, and (at the last
    step) a tool of the reference never called. PASS iff there is none, and
    ``faulted_step`` is the first fault's step; on a scale, the top level less one per
    fault.

Example:
    >>> toy_trajectory({"task": "Weather?", "trajectory": "[1] user: Weather?\\n"
    ...     '[2] assistant calls w({"c": 1})\\n[3] assistant calls w({"c": 1})'})["faulted_step"]
    3
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_STEP = re.compile(r"^\[(\d+)\] (.*)$")
_CALL = re.compile(r"^assistant calls ([^(]*)\((.*)\)")
_CJK = re.compile(r"[\u3400-\u9fff]")
_WORD = re.compile(r"[^\W_]+")
_DECLINES = (
    *("sorry", "cannot", "can't", "unable", "failed", "error"),
    *("не могу", "не удалось", "ошибк", "извин"),
    *("无法", "抱歉", "失败", "错误"),
)
# Per rule, its reason in English, Russian and Chinese.
_REASONS: dict[str, dict[str, str]] = {
    "no_answer": {
        "en": "The agent never gave a final answer (last step {step}).",
        "ru": "Агент так и не дал итогового ответа (последний шаг {step}).",
        "zh": "代理没有给出最终回答（最后一步是第{step}步）。",
    },
    "declined": {
        "en": "Step {step}: the final answer reports that the task was not done.",
        "ru": "Шаг {step}: итоговый ответ сообщает, что задача не выполнена.",
        "zh": "第{step}步：最终回答表明任务没有完成。",
    },
    "differs": {
        "en": "Step {step}: the final answer does not reach the expected outcome.",
        "ru": "Шаг {step}: итоговый ответ не совпадает с ожидаемым результатом.",
        "zh": "第{step}步：最终回答没有达到预期结果。",
    },
    "done": {
        "en": "Step {step}: the final answer gives the user what they asked for.",
        "ru": "Шаг {step}: итоговый ответ даёт пользователю то, что он просил.",
        "zh": "第{step}步：最终回答给了用户所要的结果。",
    },
    "repeat": {
        "en": "Step {step} repeats the call of step {first}: {tool} with the same arguments.",
        "ru": "Шаг {step} повторяет вызов шага {first}: {tool} с теми же аргументами.",
        "zh": "第{step}步重复了第{first}步的调用：{tool}，参数相同。",
    },
    "extra": {
        "en": "Step {step} calls {tool}, which the reference path never needs.",
        "ru": "Шаг {step} вызывает {tool}, который в эталонном пути не нужен.",
        "zh": "第{step}步调用了{tool}，参考路径不需要它。",
    },
    "missing": {
        "en": "The agent never calls {tool}, which the reference path needs.",
        "ru": "Агент ни разу не вызывает {tool}, который нужен в эталонном пути.",
        "zh": "代理从未调用参考路径需要的{tool}。",
    },
    "sensible": {
        "en": "Each step serves the task; no call is needless or repeated.",
        "ru": "Каждый шаг служит задаче; лишних или повторных вызовов нет.",
        "zh": "每一步都服务于任务，没有多余或重复的调用。",
    },
}


def _language(text: str) -> str:
    if _CJK.search(text):
        return "zh"
    return "ru" if re.search(r"[\u0400-\u04ff]", text) else "en"


def _tokens(text: str) -> set[str]:
    cjk = "".join(_CJK.findall(text))
    pairs = {cjk[i : i + 2] for i in range(len(cjk) - 1)} or set(cjk)
    return {word.lower() for word in _WORD.findall(_CJK.sub(" ", text))} | pairs


def steps_of(trajectory: str) -> list[tuple[int, str]]:
    """``(number, text)`` of each step of a rendered trajectory (indented lines joined)."""
    steps: list[tuple[int, str]] = []
    for line in trajectory.splitlines():
        found = _STEP.match(line)
        if found:
            steps.append((int(found.group(1)), found.group(2)))
        elif steps and line.startswith("    "):
            steps[-1] = (steps[-1][0], f"{steps[-1][1]}\n{line[4:]}")
    return steps


def toy_goal(sections: Mapping[str, str]) -> dict[str, Any]:
    """The toy ``GoalVerdict`` for a ``judge_agent_goal`` prompt's sections."""
    steps = steps_of(sections.get("trajectory", ""))
    language = _language(sections.get("goal", ""))
    last = steps[-1] if steps else (0, "")
    if not last[1].startswith("assistant: "):
        rule = "no_answer"
    else:
        answer = last[1].removeprefix("assistant: ").lower()
        expected = _tokens(sections.get("expected_outcome", ""))
        if any(word in answer for word in _DECLINES):
            rule = "declined"
        elif expected and len(expected & _tokens(answer)) * 2 < len(expected):
            rule = "differs"
        else:
            rule = "done"
    reason = _REASONS[rule][language].format(step=last[0])
    return {"reason": reason, "verdict": "PASS" if rule == "done" else "FAIL"}


def _calls(trajectory: str) -> list[tuple[int, str, str]]:
    calls = []
    for number, text in steps_of(trajectory):
        found = _CALL.match(text)
        if found:
            calls.append((number, found.group(1).strip(), found.group(2)))
    return calls


def _levels(text: str) -> list[int]:
    return sorted(int(found) for found in re.findall(r"^\s*(-?\d+)\s*:", text, re.MULTILINE))


def toy_trajectory(sections: Mapping[str, str]) -> dict[str, Any]:
    """The toy verdict for a ``judge_trajectory`` (or ``_scale``) prompt's sections."""
    trajectory = sections.get("trajectory", "")
    language = _language(sections.get("task", ""))
    calls, seen = _calls(trajectory), dict[tuple[str, str], int]()
    faults: list[tuple[int, str]] = []
    for number, tool, arguments in calls:
        if (tool, arguments) in seen:
            first = seen[(tool, arguments)]
            text = _REASONS["repeat"][language].format(step=number, first=first, tool=tool)
            faults.append((number, text))
        seen.setdefault((tool, arguments), number)
    if sections.get("reference_trajectory", "").strip():
        expected = {tool for _, tool, _ in _calls(sections["reference_trajectory"])}
        made = {tool for _, tool, _ in calls}
        for number, tool, _ in calls:
            if tool not in expected:
                faults.append((number, _REASONS["extra"][language].format(step=number, tool=tool)))
        last = steps_of(trajectory)[-1][0] if trajectory.strip() else 1
        for tool in sorted(expected - made):
            faults.append((last, _REASONS["missing"][language].format(tool=tool)))
    faults.sort(key=lambda fault: fault[0])
    reason = " ".join(text for _, text in faults) or _REASONS["sensible"][language]
    reply: dict[str, Any] = {"reason": reason, "faulted_step": faults[0][0] if faults else None}
    levels = _levels(sections.get("levels", ""))
    if levels:
        reply["verdict"] = max(levels[0], levels[-1] - len(faults))
    else:
        reply["verdict"] = "FAIL" if faults else "PASS"
    return reply
