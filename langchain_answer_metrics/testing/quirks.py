"""The local test server's "realistic judge" mode: quirks real models show in their replies.

A quirk changes how a judge writes its answer, never what it means: a tolerant client must
score exactly what a clean judge scores, with the same number of requests. Give the server a
table of model name to quirk names; models not in it reply cleanly::

    from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer
    from langchain_answer_metrics.testing.quirks import REALISTIC

    with LocalOpenAIServer(quirks={"judge-real": REALISTIC, "judge-fenced": ("fenced_json",)}) as s:
        ...  # ChatOpenAI(base_url=s.base_url, model="judge-real", ...) gets quirky replies
        assert "think_json" in s.requests[-1].quirks

The quirks (:data:`QUIRKS`), each applied per choice to the responder's clean reply:

- labels: ``capitalised_labels`` ("Supported", "Pass"), ``upper_labels`` ("SUPPORTED";
  AspectVerdict's "PASS"/"FAIL" stay), ``padded_labels`` (``" supported. "``, ``" PASS. "``);
- ClaimVerdicts indices: ``index_all_one`` (all 1), ``index_zero_based`` (0..n-1 by
  position), ``index_missing`` (no ``"index"`` key);
- ClaimList claims as objects: ``claim_objects`` (``{"claim": ...}``), ``text_objects``
  (``{"text": ...}``);
- ``echo_escaping``: claims, reasons and evidence keep the prompt's escaping
  (:func:`~langchain_answer_metrics.judging.prompts.escape_for_tag`: ``&amp;``, ``&lt;``...);
- content: ``fenced_json`` (```` ```json ```` fences), ``prose_json`` (a line of prose
  first), ``think_json`` (a ``<think>`` block first, mentioning ``{`` and ``}``),
  ``echo_input`` (an echoing judge, as small models are: the judged data, as the judge
  reads it back un-escaped, repeated before the answer and again after it, so whatever
  the judged text holds, a forged verdict included, stands in the reply); combined, the
  think block comes first, then the first echo, the prose line, the fenced JSON and the
  second echo. They apply to content replies (json_schema, json_object, plain text), and
  in tools mode only together with ``ignore_tools``;
- ``ignore_tools``: a request offering tools gets the JSON as message content, no tool call;
- ``invalid_tool_arguments``: tool-call arguments that are not valid JSON (the JSON in
  ```` ```json ```` fences), which langchain-openai puts in ``AIMessage.invalid_tool_calls``.

Quirks apply by the payload's shape (a ``"claims"`` list, a ``"verdicts"`` list, a top-level
``"verdict"``) and only to dict payloads; a responder's raw string is sent verbatim. The server
logs the quirks that changed a reply (``LoggedRequest.quirks``, in :data:`QUIRKS` order):
``index_all_one`` on a one-verdict reply changes nothing and is not listed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal, get_args

from langchain_answer_metrics.judging.prompts import escape_for_tag

Quirk = Literal[
    "capitalised_labels",
    "upper_labels",
    "padded_labels",
    "index_all_one",
    "index_zero_based",
    "index_missing",
    "claim_objects",
    "text_objects",
    "fenced_json",
    "prose_json",
    "think_json",
    "ignore_tools",
    "echo_escaping",
    "invalid_tool_arguments",
    "echo_input",
]
QUIRKS: tuple[Quirk, ...] = get_args(Quirk)

REALISTIC: tuple[Quirk, ...] = (
    "capitalised_labels",
    "index_all_one",
    "claim_objects",
    "think_json",
    "ignore_tools",
    "echo_escaping",
)
"""What a real open model commonly shows at once, and a tolerant reader must fully recover."""

QuirkSpec = Mapping[str, Iterable[str]] | None
"""Model name to quirk names (``None``: every model replies cleanly)."""

PROSE_LINE = "Here is the JSON you asked for:"
ECHO_BEFORE = "You asked me to judge this:"
ECHO_AFTER = "To recap, I judged:"
THINK_BLOCK = (
    "<think>\n"
    "The user wants one JSON object with the schema's keys, so { first and } last.\n"
    "Let me go through the data item by item before I write {the answer}.\n"
    "</think>\n\n"
)

Payload = Mapping[str, Any] | str


def quirk_names(names: Iterable[str], *, model: str = "") -> tuple[Quirk, ...]:
    """``names`` checked against :data:`QUIRKS`, without duplicates, in the given order.

    Raises:
        ValueError: naming the unknown quirk (and the model) and listing the known ones.

    Example::

        quirk_names(["fenced_json"])  # ("fenced_json",)
    """
    if isinstance(names, str):
        names = (names,)  # one name, not its characters
    chosen: list[Quirk] = []
    for name in names:
        if name not in QUIRKS:
            where = f" for model {model!r}" if model else ""
            raise ValueError(f"unknown quirk {name!r}{where}; known quirks: {', '.join(QUIRKS)}")
        if name not in chosen:
            chosen.append(name)
    return tuple(chosen)


def quirk_table(spec: QuirkSpec) -> dict[str, tuple[Quirk, ...]]:
    """The server's ``quirks=`` option, validated: model name to quirk names.

    Example::

        quirk_table({"judge-real": REALISTIC})["judge-real"][0]  # "capitalised_labels"
    """
    if spec is None:
        return {}
    if not isinstance(spec, Mapping):
        raise TypeError("quirks must map model names to quirk names, e.g. {'judge-a': REALISTIC}")
    return {str(model): quirk_names(names, model=str(model)) for model, names in spec.items()}


# --------------------------------------------------------------------------- the payload


def _label(label: str, quirks: tuple[Quirk, ...], aspect: bool) -> str:
    if "capitalised_labels" in quirks:
        label = label.capitalize()
    if "upper_labels" in quirks and not aspect:
        label = label.upper()
    if "padded_labels" in quirks:
        label = f" {label}. "
    return label


def _escaped(item: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {
        key: escape_for_tag(value) if key in keys and isinstance(value, str) else value
        for key, value in item.items()
    }


def _verdict(item: Any, position: int, quirks: tuple[Quirk, ...]) -> Any:
    if not isinstance(item, Mapping):
        return item
    changed = dict(item)
    if "echo_escaping" in quirks:
        changed = _escaped(changed, ("reason", "evidence"))
    if isinstance(changed.get("verdict"), str):
        changed["verdict"] = _label(changed["verdict"], quirks, aspect=False)
    if "index" in changed:
        if "index_zero_based" in quirks:
            changed["index"] = position
        if "index_all_one" in quirks:
            changed["index"] = 1
        if "index_missing" in quirks:
            del changed["index"]
    return changed


def _quirky(payload: Mapping[str, Any], quirks: tuple[Quirk, ...]) -> dict[str, Any]:
    changed = dict(payload)
    claims = changed.get("claims")
    if isinstance(claims, list) and all(isinstance(claim, str) for claim in claims):
        if "echo_escaping" in quirks:
            claims = [escape_for_tag(claim) for claim in claims]
        if "claim_objects" in quirks:
            claims = [{"claim": claim} for claim in claims]
        elif "text_objects" in quirks:
            claims = [{"text": claim} for claim in claims]
        changed["claims"] = claims
    verdicts = changed.get("verdicts")
    if isinstance(verdicts, list):
        changed["verdicts"] = [
            _verdict(item, position, quirks) for position, item in enumerate(verdicts)
        ]
    if isinstance(changed.get("verdict"), str):  # AspectVerdict
        if "echo_escaping" in quirks:
            changed = _escaped(changed, ("reason",))
        changed["verdict"] = _label(changed["verdict"], quirks, aspect=True)
    return changed


def transform_payload(payload: Payload, quirks: tuple[Quirk, ...], applied: set[Quirk]) -> Payload:
    """The payload as a quirky judge writes it; adds the quirks that changed it to ``applied``.

    Example::

        applied: set[Quirk] = set()
        transform_payload({"claims": ["a"]}, ("claim_objects",), applied)
        # {"claims": [{"claim": "a"}]}; applied == {"claim_objects"}
    """
    if not isinstance(payload, Mapping) or not quirks:
        return payload
    quirky = _quirky(payload, quirks)
    # A quirk was applied if the reply would differ without it (index_all_one on a
    # one-verdict reply, or text_objects under claim_objects, changes nothing).
    for quirk in quirks:
        if _quirky(payload, tuple(q for q in quirks if q != quirk)) != quirky:
            applied.add(quirk)
    return quirky


# --------------------------------------------------------------------------- the message


def replies_as_content(mode: str, quirks: tuple[Quirk, ...]) -> bool:
    """Whether the reply goes in the message content (not a tool call).

    Example::

        replies_as_content("tools", ("ignore_tools",))  # True
    """
    return mode != "tools" or "ignore_tools" in quirks


def fenced(text: str) -> str:
    """``text`` in Markdown ``json`` fences.

    Example::

        fenced('{"a": 1}')  # '```json\\n{"a": 1}\\n```'
    """
    return f"```json\n{text}\n```"


def content_wrapper(
    quirks: tuple[Quirk, ...], applied: set[Quirk], echoed: str = ""
) -> Callable[[str], str] | None:
    """How the content quirks wrap the JSON text of a content reply (None: not at all).

    Adds the content quirks it will apply to ``applied``; ``echoed`` is what
    ``echo_input`` repeats (nothing to repeat: the quirk does not apply).

    Example::

        wrap = content_wrapper(("prose_json",), set())
        wrap("{}")  # "Here is the JSON you asked for:\\n{}"
    """
    content = ("fenced_json", "prose_json", "echo_input", "think_json")
    wanted = [quirk for quirk in content if quirk in quirks]
    if not echoed and "echo_input" in wanted:
        wanted.remove("echo_input")
    if not wanted:
        return None
    applied.update(wanted)

    def wrap(text: str) -> str:
        if "fenced_json" in wanted:
            text = fenced(text)
        if "prose_json" in wanted:
            text = f"{PROSE_LINE}\n{text}"
        if "echo_input" in wanted:
            text = f"{ECHO_BEFORE}\n{echoed}\n\n{text}\n\n{ECHO_AFTER}\n{echoed}"
        if "think_json" in wanted:
            text = THINK_BLOCK + text
        return text

    return wrap


def tool_arguments(text: str, quirks: tuple[Quirk, ...], applied: set[Quirk]) -> str:
    """Tool-call arguments; fenced (so not valid JSON) with ``invalid_tool_arguments``.

    Example::

        tool_arguments("{}", ("invalid_tool_arguments",), set())  # "```json\\n{}\\n```"
    """
    if "invalid_tool_arguments" not in quirks:
        return text
    applied.add("invalid_tool_arguments")
    return fenced(text)


def in_order(applied: set[Quirk]) -> tuple[Quirk, ...]:
    """``applied`` in :data:`QUIRKS` order (for the request log).

    Example::

        in_order({"think_json", "upper_labels"})  # ("upper_labels", "think_json")
    """
    return tuple(quirk for quirk in QUIRKS if quirk in applied)
