"""Property tests: for every ordered pair of protocols, A → B → A keeps every call id, name
and argument and every result's pairing, content and error flag — or B's warnings name
exactly what was lost."""

from __future__ import annotations

import itertools
import json
import string

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowdebug import protocols
from flowdebug.model import (
    Conversation,
    Image,
    Message,
    Text,
    Tool,
    ToolCall,
    ToolChoice,
    ToolResult,
)
from tests.cases import PIXEL
from tests.hypothesis_profiles import examples

NAMES = list(protocols.PROTOCOLS)
PAIRS = [(a, b) for a, b in itertools.permutations(NAMES, 2)]

# What each invariant's loss must be reported as.
LOSS_CODES = {
    "call_id": {"call_id_renamed"},
    "name": {"tool_name_renamed"},
    "arguments": {"raw_arguments_dropped"},
    "content": {"image_in_result_dropped", "structured_content_dropped"},
    "is_error": {"error_flag_lost"},
    "results": {"text_dropped"},
}

safe_text = st.text(
    string.ascii_letters + string.digits + " .,:;!?é€", min_size=1, max_size=40
).filter(lambda s: s.strip() == s and s.strip())
json_scalar = st.one_of(
    st.integers(-1000, 1000),
    st.booleans(),
    safe_text,
    st.floats(-1e6, 1e6, allow_nan=False).map(lambda f: round(f, 3)),
)
arguments = st.dictionaries(
    st.sampled_from(["location", "unit", "count", "query", "tags"]),
    st.one_of(json_scalar, st.lists(json_scalar, max_size=3)),
    max_size=4,
)
call_ids = st.one_of(
    st.text(string.ascii_letters + string.digits, min_size=4, max_size=16).map(
        lambda s: f"call_{s}"
    ),
    st.sampled_from(["call.with.dots", "id with space", "a/b"]),
)
tool_names = st.one_of(
    st.sampled_from(["get_weather", "create_task", "search"]), st.sampled_from(["fs.read", "a/b"])
)


@st.composite
def result_content(draw):
    kind = draw(st.sampled_from(["text", "json", "parts"]))
    if kind == "text":
        return draw(safe_text)
    if kind == "json":
        return json.dumps(
            draw(st.dictionaries(st.sampled_from(["t", "ok"]), json_scalar, min_size=1, max_size=2))
        )
    parts = [Text(text=draw(safe_text))]
    if draw(st.booleans()):
        parts.append(Image(media_type="image/png", data=PIXEL))
    return parts


@st.composite
def conversations(draw):
    names = draw(st.lists(tool_names, min_size=1, max_size=3, unique=True))
    tools = [
        Tool(
            name=n,
            description=f"Tool {n} does a thing.",
            parameters={"type": "object", "properties": {}},
        )
        for n in names
    ]
    messages = [Message(role="user", parts=[Text(text=draw(safe_text))])]
    used: set[str] = set()
    for _ in range(draw(st.integers(1, 3))):
        calls = []
        for _ in range(draw(st.integers(1, 3))):
            cid = draw(call_ids.filter(lambda c: c not in used))
            used.add(cid)
            calls.append(
                ToolCall(id=cid, name=draw(st.sampled_from(names)), arguments=draw(arguments))
            )
        lead = [Text(text=draw(safe_text))] if draw(st.booleans()) else []
        messages.append(Message(role="assistant", parts=[*lead, *calls]))
        messages.append(
            Message(
                role="tool",
                parts=[
                    ToolResult(
                        call_id=c.id,
                        name=c.name,
                        content=draw(result_content()),
                        is_error=draw(st.booleans()),
                    )
                    for c in calls
                ],
            )
        )
    messages.append(Message(role="assistant", parts=[Text(text=draw(safe_text))]))
    return Conversation(
        system=draw(st.one_of(st.none(), safe_text)),
        tools=tools,
        tool_choice=ToolChoice(mode="auto"),
        messages=messages,
    )


def _calls(conv: Conversation) -> list[ToolCall]:
    return [c for m in conv.messages for c in m.tool_calls]


def _results(conv: Conversation) -> list[ToolResult]:
    return [r for m in conv.messages for r in m.tool_results]


def _content(r: ToolResult) -> object:
    if isinstance(r.content, str):
        return r.content
    if len(r.content) == 1 and isinstance(r.content[0], Text):
        return r.content[0].text
    return [p.model_dump(exclude_none=True) for p in r.content]


def losses(before: Conversation, after: Conversation) -> set[str]:
    """Which invariants differ between two decodings of the same protocol."""
    lost = set()
    b_calls, a_calls = _calls(before), _calls(after)
    if len(b_calls) != len(a_calls):
        lost.add("results")
    for b, a in zip(b_calls, a_calls, strict=False):
        if b.id != a.id:
            lost.add("call_id")
        if b.name != a.name:
            lost.add("name")
        if b.arguments != a.arguments or b.raw_arguments != a.raw_arguments:
            lost.add("arguments")
    b_res, a_res = _results(before), _results(after)
    if len(b_res) != len(a_res):
        lost.add("results")
    # Pairing: each result must still point at the call in the same position.
    b_index = {c.id: i for i, c in enumerate(b_calls)}
    a_index = {c.id: i for i, c in enumerate(a_calls)}
    for b, a in zip(b_res, a_res, strict=False):
        if b_index.get(b.call_id) != a_index.get(a.call_id):
            lost.add("call_id")
        if _content(b) != _content(a):
            lost.add("content")
        if b.is_error != a.is_error:
            lost.add("is_error")
    return lost


def roundtrip(conv: Conversation, a: str, b: str):
    ca, cb = protocols.get(a), protocols.get(b)
    start = ca.decode_request(ca.encode_request(conv).value).value
    to_b = cb.encode_request(start)
    middle = cb.decode_request(to_b.value)
    back = ca.decode_request(ca.encode_request(middle.value).value).value
    return start, back, {w.code for w in [*to_b.warnings, *middle.warnings]}


# Every ordered pair takes every drawn conversation: drawing is most of the test's time (70 % of
# its CPU was hypothesis's own), so the pairs share the draws rather than each drawing its own
# (it was a test per pair: 30 of them, 14 s of CPU). Each pair still gets every example; a
# failure names the pair.
@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conv=conversations())
def test_a_to_b_to_a_keeps_calls_and_results_or_warns(conv):
    each_pair_keeps_or_warns(conv, PAIRS)


def each_pair_keeps_or_warns(conv: Conversation, pairs: list[tuple[str, str]]) -> None:
    """A -> B -> A for each ordered pair: every call, result or text the trip loses, a warning
    of the trip names (tests/protocols/bedrock runs it over Bedrock's pairs)."""
    for a, b in pairs:
        start, back, codes = roundtrip(conv, a, b)
        for invariant in losses(start, back):
            assert codes & LOSS_CODES[invariant], (
                f"{a}->{b}->{a} lost {invariant} without a warning (got {sorted(codes)})"
            )


def test_weather_survives_every_pair_without_loss():
    from tests.cases import WEATHER_CONTINUATION

    for a, b in PAIRS:
        start, back, _ = roundtrip(WEATHER_CONTINUATION, a, b)
        assert losses(start, back) == set(), (a, b)
