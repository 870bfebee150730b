"""OpenTelemetry GenAI traces (OTLP JSON) exported by real instrumentations import as sessions
with their tools, calls and results, drawn like any other; a malformed one names its path."""

from __future__ import annotations

import copy
import json

import pytest

from flowdebug import protocols
from flowdebug.engine.session.debugger import Session
from flowdebug.errors import CodecError
from flowdebug.exchange.exports import graph
from flowdebug.exchange.imports import import_session
from flowdebug.model import ToolCall, ToolResult
from flowdebug.players.manual import ManualPlayer
from flowdebug.store.sessions import open_store
from tests.paths import FIXTURES

OTEL = FIXTURES / "otel"
SUPPORT = "You are a support agent. Use the tools you are given."
APPLE = "I choose apple as one of my favorite fruits. It's crisp, sweet, and very refreshing!"
ORDER = {"order_id": "A-1187"}


def load(name: str) -> dict:
    return json.loads((OTEL / name).read_text())


def calls(imported) -> list[tuple[str, str, dict]]:
    conv = imported.state.conversation
    return [
        (p.id, p.name, p.arguments)
        for m in conv.messages
        for p in m.parts
        if isinstance(p, ToolCall)
    ]


def results(imported) -> list[tuple[str, object]]:
    conv = imported.state.conversation
    return [
        (p.call_id, p.content) for m in conv.messages for p in m.parts if isinstance(p, ToolResult)
    ]


def test_openllmetry_current_attributes_import_with_their_tool_and_call():
    imported = import_session((OTEL / "openllmetry.json").read_text())
    conv = imported.state.conversation
    assert (imported.source, imported.kind) == ("otel", "trace")
    assert (
        imported.name
        == "OpenTelemetry trace from opentelemetry.instrumentation.openai.v1 (imported)"
    )
    assert conv.system == SUPPORT
    assert conv.model == "gpt-4o-mini"
    assert [(t.name, t.description) for t in conv.tools] == [
        ("lookup_order", "Look up an order by its identifier.")
    ]
    assert conv.tools[0].parameters["required"] == ["order_id"]
    assert [m.role for m in conv.messages] == ["user", "assistant"]
    assert conv.messages[0].parts[0].text == "Where is order A-1187?"
    assert calls(imported) == [("call_9RtYbK2mXqLp", "lookup_order", ORDER)]
    assert imported.warnings == []
    assert imported.state.next_phase == "execution"


def test_otel_openai_v2_call_without_declarations_declares_the_called_tool_and_says_so():
    imported = import_session(load("openai-v2.json"))
    conv = imported.state.conversation
    assert calls(imported) == [("call_9RtYbK2mXqLp", "lookup_order", ORDER)]
    assert [t.name for t in conv.tools] == ["lookup_order"]
    assert conv.tools[0].description is None
    assert [w.code for w in imported.warnings] == ["tool_metadata_dropped"]


def test_litellm_indexed_function_call_and_functions_fill_an_empty_output_message():
    imported = import_session(load("litellm.json"))
    conv = imported.state.conversation
    # LiteLLM's gen_ai.output.messages has no parts; the call is in gen_ai.completion.0.*
    assert calls(imported) == [("call_otel_1", "lookup_order", ORDER)]
    assert [(t.name, t.parameters["properties"]) for t in conv.tools] == [
        ("lookup_order", {"order_id": {"type": "string"}})
    ]
    assert conv.system == SUPPORT
    assert [w.code for w in imported.warnings] == ["tool_call_id_missing"]


def test_agentscope_trace_keeps_its_history_results_and_the_tool_span_result():
    imported = import_session(load("agentscope.json"))
    conv = imported.state.conversation
    assert conv.system == "You are a helpful assistant named Friday."
    assert [m.role for m in conv.messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
        "tool",
    ]
    first, second = calls(imported)
    assert first[:2] == ("call_cd1858cf64ad402f8f64e6", "generate_response")
    assert first[2]["age"] == 76
    assert second == (
        "call_7f25ce38ce304f4eb20a0a",
        "generate_response",
        {
            "choice": "apple",
            "response": APPLE,
        },
    )
    # the first result is in the chat span's history, the second only on the execute_tool span
    assert results(imported) == [
        ("call_cd1858cf64ad402f8f64e6", "Successfully generated response."),
        ("call_7f25ce38ce304f4eb20a0a", "Successfully generated response."),
    ]
    assert conv.tools[0].name == "generate_response"
    assert conv.tools[0].description.startswith("Generate a response.")
    assert imported.warnings == []  # the invoke_agent span is no model call of its own
    assert imported.state.next_phase == "continuation"


@pytest.mark.parametrize(
    "name", ["openllmetry.json", "openai-v2.json", "litellm.json", "agentscope.json"]
)
def test_an_imported_otel_trace_is_drawn_in_every_protocol_and_steps(name):
    imported = import_session(load(name))
    state = imported.state
    ids = [i for i, _, _ in calls(imported)]
    for protocol in protocols.PROTOCOLS:  # each call's arrow, its id (cut to fit) on it
        dot = graph(state, protocol, "dot")
        assert all(i[:8] in dot for i in ids), protocol
    assert [e.kind for e in state.events].count("tool_call") == len(calls(imported))
    step, events = state.step, len(state.events)
    session = Session(state, ManualPlayer())
    session.step()  # the next phase runs like any session's
    assert session.state.step == step + 1
    assert len(session.state.events) > events


def test_an_otel_import_is_saved_in_the_store_given(tmp_path):
    store = open_store(str(tmp_path / "s.db"))
    imported = import_session(load("openllmetry.json"), store=store)
    assert store.load(imported.state.id).conversation == imported.state.conversation


def test_an_otel_trace_as_json_lines_of_exports_imports():
    text = json.dumps(load("openai-v2.json")) + "\n" + json.dumps(load("openllmetry.json"))
    imported = import_session(text)
    assert calls(imported) == [("call_9RtYbK2mXqLp", "lookup_order", ORDER)]


def test_older_events_and_indexed_prompt_attributes_are_read():
    trace = load("openai-v2.json")
    span = trace["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    span["attributes"] = [a for a in span["attributes"] if "messages" not in a["key"]]
    span["attributes"] += [
        {"key": "gen_ai.prompt.0.role", "value": {"stringValue": "user"}},
        {"key": "gen_ai.prompt.0.content", "value": {"stringValue": "Where is order A-1187?"}},
    ]
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "lookup_order", "arguments": '{"order_id": "A-1187"}'},
    }
    span["events"] = [
        {
            "name": "gen_ai.choice",
            "attributes": [
                {
                    "key": "gen_ai.event.content",
                    "value": {
                        "stringValue": json.dumps(
                            {
                                "index": 0,
                                "finish_reason": "tool_calls",
                                "message": {"role": "assistant", "tool_calls": [call]},
                            }
                        )
                    },
                },
            ],
        }
    ]
    imported = import_session(trace)
    assert imported.state.conversation.messages[0].parts[0].text == "Where is order A-1187?"
    assert calls(imported) == [("call_1", "lookup_order", ORDER)]


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (lambda t: t["resourceSpans"][0].update(scopeSpans={}), "$.resourceSpans[0].scopeSpans"),
        (
            lambda t: t["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"][3].update(
                value={"weirdValue": 1}
            ),
            "$.resourceSpans[0].scopeSpans[0].spans[0].attributes[3].value",
        ),
        (
            lambda t: t["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"][9].update(
                value={"stringValue": '[{"role": "user", "parts": ['}
            ),
            "$.resourceSpans[0].scopeSpans[0].spans[0].attributes[gen_ai.input.messages]",
        ),
        (
            lambda t: t["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"][10].update(
                value={"stringValue": '[{"type": "function", "description": "x"}]'}
            ),
            "$.resourceSpans[0].scopeSpans[0].spans[0].attributes[gen_ai.tool.definitions][0].name",
        ),
        (
            lambda t: t["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"][4].update(
                value={"intValue": "many"}
            ),
            "$.resourceSpans[0].scopeSpans[0].spans[0].attributes[4].value.intValue",
        ),
        (lambda t: t.update(resourceSpans=[]), "$.resourceSpans"),
        (
            lambda t: t["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"][9].update(
                value={"stringValue": "[" * 5000 + "]" * 5000}
            ),
            "$.resourceSpans[0].scopeSpans[0].spans[0].attributes[gen_ai.input.messages]",
        ),
    ],
)
def test_a_malformed_otel_trace_names_the_json_path_and_saves_nothing(change, path, tmp_path):
    trace = copy.deepcopy(load("openllmetry.json"))
    change(trace)
    store = open_store(str(tmp_path / "s.db"))
    with pytest.raises(CodecError) as e:
        import_session(trace, store=store)
    assert (e.value.protocol, e.value.path) == ("otel", path)
    assert store.list() == []
