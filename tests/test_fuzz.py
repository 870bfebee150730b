"""Fuzzing (hypothesis): importers, the history editor and the converters never crash.

Whatever they are given, they either succeed or raise a FlowdebugError whose message is
clear (one readable reason; a CodecError names a JSON path from ``$``), and a refused edit
leaves the session byte-identical. ``FLOWDEBUG_FUZZ_EXAMPLES`` sets the examples per test.
"""

from __future__ import annotations

import copy
import json
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowdebug.engine.debugger import Session
from flowdebug.engine.edits import EditError
from flowdebug.errors import CodecError, FlowdebugError
from flowdebug.exchange.exports import trace
from flowdebug.exchange.imports import import_session
from flowdebug.protocols.convert import TARGETS, convert
from flowdebug.store.rows import state_json
from tests.paths import WIRE

REFERENCE = {p.name: json.loads(p.read_text("utf-8")) for p in sorted(WIRE.glob("*.json"))}

FUZZ = settings(
    max_examples=int(os.environ.get("FLOWDEBUG_FUZZ_EXAMPLES", "120")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# Keys the decoders look for, so random objects reach past the first check.
KEYS = st.sampled_from(
    [
        "role", "content", "parts", "messages", "kind", "type", "text", "id", "name",
        "arguments", "input", "args", "call_id", "tool_use_id", "tool_call_id", "tools",
        "tool_calls", "function", "functionCall", "functionResponse", "contents", "output",
        "jsonrpc", "method", "params", "result", "isError", "format", "events", "toolset",
        "conversation", "model", "max_tokens", "system", "is_error", "response",
    ]
)  # fmt: skip
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | st.text(st.characters(exclude_categories=[]), max_size=3)  # lone surrogates too
    | st.sampled_from(["user", "assistant", "tool", "text", "tool_call", "tool_result", "2.0"])
)
JSON = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(KEYS | st.text(max_size=8), inner, max_size=5)
    ),
    max_leaves=24,
)


def assert_clear(error: BaseException) -> None:
    """A refusal a person can act on: our error type, one short readable reason."""
    assert isinstance(error, FlowdebugError), f"{type(error).__name__}: {error}"
    message = str(error)
    assert message.strip(), "an empty error message"
    assert "Traceback" not in message and len(message) < 2000, message
    if isinstance(error, CodecError):
        assert error.path.startswith("$"), error.path


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*prefix, i))
    return out


def _mutate(data: st.DataObject, payload: Any) -> Any:
    """``payload`` with one to three random edits: replace, delete, empty, duplicate, wrap."""
    payload = copy.deepcopy(payload)
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_paths(payload)))
        op = data.draw(st.sampled_from(["replace", "delete", "empty", "duplicate", "wrap"]))
        if not path:
            payload = data.draw(JSON) if op == "replace" else [payload]
            continue
        parent = payload
        for step in path[:-1]:
            parent = parent[step]
        key, old = path[-1], parent[path[-1]]
        match op:
            case "replace":
                parent[key] = data.draw(JSON)
            case "delete":
                del parent[key]
            case "empty":
                parent[key] = type(old)() if isinstance(old, dict | list | str) else None
            case "duplicate" if isinstance(parent, list):
                parent.insert(key, copy.deepcopy(old))
            case _:
                parent[key] = [old] if op == "wrap" else {"value": old}
    return payload


@pytest.fixture(scope="module")
def finished() -> Session:
    session = Session.from_scenario("tasks")
    session.run()
    return session


# -- importers ------------------------------------------------------------------------------------


def _try_import(data: Any) -> None:
    try:
        imported = import_session(data)
    except FlowdebugError as e:
        assert_clear(e)
        return
    except Exception as e:  # a crash: report it with the input
        pytest.fail(f"import crashed with {type(e).__name__}: {e}")
    state_json(imported.state)  # whatever imports can be saved


@FUZZ
@given(JSON)
def test_importing_any_json_succeeds_or_names_the_problem(value):
    _try_import(value)


@FUZZ
@given(st.text(max_size=200) | st.binary(max_size=200))
def test_importing_any_text_or_bytes_succeeds_or_names_the_problem(blob):
    _try_import(blob)


@FUZZ
@given(st.data())
def test_importing_mutated_reference_payloads_never_crashes(data):
    name = data.draw(st.sampled_from(sorted(REFERENCE)))
    _try_import(_mutate(data, REFERENCE[name]))


@FUZZ
@given(st.data())
def test_importing_mutated_traces_never_crashes(finished, data):
    _try_import(_mutate(data, trace(finished.state)))


@FUZZ
@given(st.data())
def test_pasting_tools_mutated_from_any_payload_never_crashes(data):
    from flowdebug.exchange.tool_imports import parse_tools

    source = data.draw(st.sampled_from(sorted(REFERENCE)) | st.just("random"))
    payload = data.draw(JSON) if source == "random" else _mutate(data, REFERENCE[source])
    text = json.dumps(payload) if data.draw(st.booleans()) else payload
    try:
        parse_tools(text)
    except FlowdebugError as e:
        assert_clear(e)
    except Exception as e:  # a crash: report it with the input
        pytest.fail(f"parse_tools crashed with {type(e).__name__}: {e}")


# -- the history editor ---------------------------------------------------------------------------

PART_KINDS = st.sampled_from(["text", "thinking", "image", "tool_call", "tool_result", "x"])


def _part_like() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"kind": PART_KINDS},
        optional={
            "text": SCALARS,
            "id": SCALARS,
            "name": SCALARS,
            "arguments": JSON,
            "call_id": SCALARS,
            "content": JSON,
            "is_error": SCALARS,
            "signature": SCALARS,
            "extra": JSON,
        },
    )


EDITS = (
    _part_like()
    | st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant", "tool", "system", "bot"])},
        optional={"parts": st.lists(_part_like(), max_size=3), "provider_details": JSON},
    )
    | JSON
    | st.text(max_size=60)
    | _part_like().map(json.dumps)
)


@FUZZ
@given(
    op=st.sampled_from(["edit_part", "edit_message"]),
    msg=st.integers(-1, 12),
    part=st.integers(-1, 3),
    edit=EDITS,
)
def test_an_edit_is_applied_or_refused_leaving_the_session_byte_identical(
    finished, op, msg, part, edit
):
    session = finished.clone()
    before, undo = session.state.model_dump_json(), len(session.undo_stack)
    try:
        if op == "edit_part":
            session.edit_part(msg, part, edit)
        else:
            session.edit_message(msg, edit)
    except EditError as e:
        assert_clear(e)
        assert session.state.model_dump_json() == before
        assert len(session.undo_stack) == undo
        return
    state_json(session.state)  # an accepted edit leaves a session that can be saved
    session.undo()
    assert session.state.model_dump_json() == before


def test_an_edit_with_text_that_is_not_unicode_is_refused(finished):
    session = finished.clone()
    before = session.state.model_dump_json()
    with pytest.raises(EditError, match=r"messages\[0\]\.parts\[0\].*surrogate"):
        session.edit_part(0, 0, '{"kind": "text", "text": "\\ud800"}')
    assert session.state.model_dump_json() == before


# -- converters -----------------------------------------------------------------------------------


@FUZZ
@given(st.data())
def test_converting_mutated_reference_payloads_never_crashes(data):
    name = data.draw(st.sampled_from(sorted(REFERENCE)))
    payload = _mutate(data, REFERENCE[name])
    target = data.draw(st.sampled_from(TARGETS))
    try:
        out, warnings = convert(payload, target)
    except FlowdebugError as e:
        assert_clear(e)
        return
    except Exception as e:  # a crash: report it with the input
        pytest.fail(f"convert to {target} crashed with {type(e).__name__}: {e}")
    json.dumps(out)
    assert all(w.code and w.message for w in warnings)


# -- inputs that once crashed a codec (found by the fuzzers above) --------------------------------


def _encoded(protocol: str, op: str) -> Any:
    from flowdebug import protocols
    from tests import cases

    codec = protocols.get(protocol)
    if op == "stream":
        return copy.deepcopy(codec.encode_stream(cases.WEATHER_TOOL_USE).value)
    return copy.deepcopy(codec.encode_response(cases.WEATHER_TOOL_USE).value)


def _anthropic_stream_usage_text() -> Any:
    events = _encoded("anthropic", "stream")
    events[0]["message"]["usage"] = "many"
    return events


def _responses_usage_details_list() -> Any:
    payload = _encoded("openai-responses", "response")
    payload["usage"] = {"input_tokens": 1, "output_tokens": 1, "input_tokens_details": [1]}
    return payload


def _responses_stream_output_flag() -> Any:
    events = _encoded("openai-responses", "stream")
    events[-1]["response"]["output"] = True
    return events


ONCE_CRASHED = {
    "anthropic stream event type is a list": lambda: [{"type": ["message_start"]}],
    "anthropic stream usage is text": _anthropic_stream_usage_text,
    "responses usage details is a list": _responses_usage_details_list,
    "responses stream output is a boolean": _responses_stream_output_flag,
    "anthropic request tools is a number": lambda: {
        "model": "claude-sonnet-4-6",
        "max_tokens": 5,
        "messages": [{"role": "user", "content": "hi"}],
        "tools": 5,
    },
    "chat content part type is a list": lambda: {
        "model": "m",
        "messages": [{"role": "user", "content": [{"type": [1]}]}],
    },
    "tool schema type is a list next to a format": lambda: {
        "messages": [],
        "tools": [{"name": "t", "parameters": {"format": "date", "type": ["string"]}}],
    },
    "a call id with a lone surrogate": lambda: {
        "model": "m",
        "messages": [
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": "\ud800", "type": "function", "function": {"name": "f", "arguments": ""}}
                ],
            }
        ],
    },
}


@pytest.mark.parametrize("case", list(ONCE_CRASHED))
@pytest.mark.parametrize("target", TARGETS)
def test_inputs_that_once_crashed_a_codec_convert_or_are_refused(case, target):
    try:
        convert(ONCE_CRASHED[case](), target)
    except FlowdebugError as e:
        assert_clear(e)
