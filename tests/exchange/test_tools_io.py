"""Reading pasted tools in every vendor's format, the tool form, and toolset edits."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from flowdebug import protocols
from flowdebug.engine.execution.canned_handlers import FixedHandler, RulesHandler, TemplateHandler
from flowdebug.engine.execution.handlers import (
    CodeHandler,
    McpHandler,
    PythonHandler,
    ToolEntry,
    Toolset,
)
from flowdebug.errors import CodecError, UsageError
from flowdebug.exchange.tool_imports import import_tools, parse_tools
from flowdebug.exchange.tools import (
    ToolForm,
    ToolFormError,
    apply_form,
    delete_tool,
    entry_from_form,
    findings_by_tool,
    tool_rows,
    upsert_tool,
)
from flowdebug.lint import linter as lint
from flowdebug.mcp.spec import McpServerSpec
from flowdebug.model import Tool
from flowdebug.protocols.tools import tool_envelope
from sample_tools import toolset as sample_toolset
from tests import cases

TOOLS = cases.TASK_TOOLS  # two tools, one annotated destructive


def request(protocol: str) -> dict:
    return protocols.get(protocol).encode_request(cases.TASKS).value


def same_tools(got: list[Tool], want: list[Tool]) -> None:
    assert [(t.name, t.description, t.parameters) for t in got] == [
        (t.name, t.description, t.parameters) for t in want
    ]


def weather() -> ToolEntry:
    entry = sample_toolset("weather").get("get_weather")
    assert entry is not None
    return entry


# -- parse_tools: every vendor's spelling --------------------------------------------------------


@pytest.mark.parametrize(
    ("protocol", "source"),
    [
        ("anthropic", "Anthropic tools list"),
        ("openai-chat", "OpenAI Chat tools list"),
        ("openai-responses", "OpenAI Responses tools list"),
        ("gemini", "Gemini tools list"),
    ],
)
def test_parse_tools_reads_a_bare_tools_list_of_each_vendor(protocol, source):
    tools = request(protocol)["tools"]
    got = parse_tools(json.dumps(tools))
    assert (got.protocol, got.source) == (protocol, source)
    same_tools(got.tools, TOOLS)


@pytest.mark.parametrize("protocol", ["anthropic", "openai-chat", "openai-responses", "gemini"])
def test_parse_tools_reads_a_whole_request_of_each_vendor(protocol):
    got = parse_tools(request(protocol))
    assert got.protocol == protocol
    assert got.source == f"{protocols.get(protocol).title} request"
    same_tools(got.tools, TOOLS)


def test_parse_tools_reads_gemini_function_declarations_alone_and_one_by_one():
    decls = request("gemini")["tools"][0]["functionDeclarations"]
    listed = parse_tools(decls)
    assert (listed.protocol, listed.source) == ("gemini", "Gemini functionDeclarations list")
    same_tools(listed.tools, TOOLS)
    one = parse_tools(decls[0])
    assert one.source == "Gemini functionDeclaration"
    same_tools(one.tools, TOOLS[:1])


def test_parse_tools_reads_an_mcp_tools_list_result_in_every_wrapping():
    response = request("mcp")[1]["msg"]
    assert response["result"]["tools"]
    for payload in (response, response["result"], response["result"]["tools"]):
        got = parse_tools(payload)
        assert got.protocol == "mcp"
        same_tools(got.tools, TOOLS)
        assert got.tools[1].destructive
    assert parse_tools(response).source == "MCP (JSON-RPC) tools/list result"


def test_parse_tools_reads_one_tool_and_an_object_holding_only_tools():
    tools = request("openai-chat")["tools"]
    one = parse_tools(tools[0])
    assert (one.source, one.names) == ("OpenAI Chat tool", ["create_task"])
    wrapped = parse_tools({"tools": tools})
    assert (wrapped.protocol, wrapped.names) == ("openai-chat", ["create_task", "complete_task"])


def test_parse_tools_reads_the_reference_strict_openai_tool():
    tool = {
        "type": "function",
        "function": {
            "name": "get_weather",
            "strict": True,
            "parameters": {
                "type": "object",
                "properties": {"location": {"type": "string"}},
                "required": ["location"],
                "additionalProperties": False,
            },
        },
    }
    got = parse_tools([tool])
    assert got.tools[0].strict is True


# -- parse_tools: refusals name the JSON path ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "path", "words"),
    [
        ("", "$", "nothing pasted"),
        ('[{"name": "x",', "$", "not valid JSON"),
        ("[]", "$", "empty"),
        ('"tools"', "$", "got str"),
        ("[1]", "$[0]", "expected a tool object, got int"),
        ('{"hello": "world"}', "$", "keys found: hello"),
        ('[{"name": "a", "input_schema": {}}, {"name": "b"}]', "$[1]", "not a tool declaration"),
        ('{"tools": [{"foo": 1}]}', "$.tools[0]", "not a tool declaration"),
        (
            '[{"name": "a", "input_schema": {}}, {"type": "function", "function": {"name": "b"}}]',
            "$[1]",
            "an OpenAI Chat tool after Anthropic tools",
        ),
        (
            '[{"type": "function", "function": {"name": "a", "parameters": 3}}]',
            "$[0].function.parameters",
            "expected an object",
        ),
        (
            '[{"name": "a", "input_schema": {}}, {"name": "a", "input_schema": {}}]',
            "$[1]",
            "two tools are named 'a'",
        ),
    ],
)
def test_parse_tools_refuses_with_the_json_path_of_the_problem(text, path, words):
    with pytest.raises(CodecError) as err:
        parse_tools(text)
    assert err.value.path == path
    assert words in err.value.reason


def test_parse_tools_refuses_a_model_response_because_it_declares_no_tools():
    response = protocols.get("anthropic").encode_response(cases.WEATHER_TOOL_USE).value
    with pytest.raises(CodecError, match="declares no tools"):
        parse_tools(response)


def test_parse_tools_refuses_a_request_without_tools():
    payload = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
    with pytest.raises(CodecError, match="Anthropic Messages request declares no tools"):
        parse_tools(payload)


def test_envelope_maps_decoder_paths_back_to_the_pasted_payload():
    many = tool_envelope([{"name": "a", "parameters": {}}])
    assert many is not None and many.protocol == "gemini"
    assert many.path("$.tools[0].functionDeclarations[0].parameters") == "$[0].parameters"
    one = tool_envelope({"name": "a", "input_schema": {}})
    assert one is not None and one.path("$.tools[0].input_schema") == "$.input_schema"
    assert one.path("$.max_tokens") == "$.max_tokens"  # not under the envelope: unchanged


def test_lint_reads_bare_tools_through_the_same_envelope():
    assert lint.tool_envelope is tool_envelope
    assert not hasattr(lint, "_tool_shape")


# -- import, upsert, delete -------------------------------------------------------------------


def test_import_tools_adds_each_tool_with_a_fixed_ok_handler():
    got = import_tools(Toolset(), TOOLS)
    assert got.names == ["create_task", "complete_task"]
    assert all(e.handler == FixedHandler(result="ok") for e in got.entries)


def test_import_tools_replaces_a_declaration_and_keeps_its_handler():
    before = sample_toolset("weather")
    pasted = cases.WEATHER_TOOL.model_copy(update={"description": "new words"})
    got = import_tools(before, [pasted])
    assert got.names == ["get_weather"]
    assert got.entries[0].tool.description == "new words"
    assert got.entries[0].handler == before.entries[0].handler
    assert got.entries[0].timeout == before.entries[0].timeout


def test_upsert_tool_replaces_in_place_and_may_rename():
    ts = import_tools(Toolset(), TOOLS)
    renamed = ts.entries[0].model_copy(
        update={"tool": ts.entries[0].tool.model_copy(update={"name": "new_task"})}
    )
    got = upsert_tool(ts, renamed, "create_task")
    assert got.names == ["new_task", "complete_task"]
    appended = upsert_tool(ts, weather())
    assert appended.names == ["create_task", "complete_task", "get_weather"]


def test_upsert_tool_refuses_a_name_taken_by_another_tool():
    ts = import_tools(Toolset(), TOOLS)
    clash = ts.entries[0].model_copy(
        update={"tool": ts.entries[0].tool.model_copy(update={"name": "complete_task"})}
    )
    with pytest.raises(ToolFormError) as err:
        upsert_tool(ts, clash, "create_task")
    assert err.value.field == "name"
    with pytest.raises(ToolFormError, match="exists already"):
        upsert_tool(ts, ts.entries[1], new=True)
    with pytest.raises(UsageError, match="no tool named 'gone'"):
        upsert_tool(ts, ts.entries[0], "gone")


def test_delete_tool_removes_it_and_refuses_an_unknown_name():
    ts = import_tools(Toolset(), TOOLS)
    assert delete_tool(ts, "create_task").names == ["complete_task"]
    with pytest.raises(UsageError, match="no tool named 'nope'"):
        delete_tool(ts, "nope")


# -- the form -------------------------------------------------------------------------------------


def test_form_of_an_entry_gives_the_same_entry_back():
    entry = weather()
    form = ToolForm.from_entry(entry)
    assert (form.handler_kind, form.function, form.timeout) == (
        "python",
        "sample_tools.weather:get_weather",
        1.0,
    )
    assert entry_from_form(form, entry) == entry


def test_form_builds_each_handler_kind():
    base = replace(ToolForm.from_entry(weather()), is_error=True)
    fixed = entry_from_form(replace(base, handler_kind="fixed", result='{"t": 3}'))
    assert fixed.handler == FixedHandler(result={"t": 3}, is_error=True)
    template = entry_from_form(replace(base, handler_kind="template", template="sun in {location}"))
    assert template.handler == TemplateHandler(template="sun in {location}", is_error=True)
    rules = entry_from_form(
        replace(base, handler_kind="rules", rules='[{"when": {"location": "Paris"}, "result": 1}]')
    )
    assert isinstance(rules.handler, RulesHandler)
    assert rules.handler.rules[0].when == {"location": "Paris"}
    source = "def handler(args):\n    return args\n"
    code = entry_from_form(replace(base, handler_kind="code", source=source))
    assert code.handler == CodeHandler(source=source)
    python = entry_from_form(
        replace(base, handler_kind="python", function="sample_tools.weather:get_weather")
    )
    assert python.handler == PythonHandler(function="sample_tools.weather:get_weather")


def test_form_reads_rules_with_a_default_reply_and_shows_them_again():
    form = replace(
        ToolForm(name="t"),
        handler_kind="rules",
        rules='{"rules": [{"match": {"q": "^a"}, "result": "A"}], "default": {"result": "?"}}',
    )
    entry = entry_from_form(form)
    assert isinstance(entry.handler, RulesHandler)
    assert entry.handler.default is not None and entry.handler.default.result == "?"
    again = ToolForm.from_entry(entry)
    assert json.loads(again.rules)["default"] == {"result": "?"}
    assert entry_from_form(again) == entry


def test_form_keeps_what_it_does_not_show_and_sets_annotations_and_timeout():
    entry = weather().model_copy(
        update={"tool": weather().tool.model_copy(update={"strict": True, "title": "Weather"})}
    )
    form = replace(
        ToolForm.from_entry(entry),
        name=" weather ",
        description="",
        annotations='{"destructiveHint": true}',
        timeout=0.0,
    )
    got = entry_from_form(form, entry)
    assert (got.tool.name, got.tool.description, got.tool.strict, got.tool.title) == (
        "weather",
        None,
        True,
        "Weather",
    )
    assert got.tool.destructive and got.timeout is None


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"name": "  "}, "name", "needs a name"),
        ({"parameters": "{"}, "parameters", "not valid JSON"),
        ({"parameters": "[]"}, "parameters", "JSON object"),
        ({"parameters": '{"type": "strin"}'}, "parameters", "$.type"),
        ({"annotations": "[1]"}, "annotations", "JSON object"),
        ({"timeout": -1.0}, "timeout", "positive"),
        ({"handler_kind": "fixed", "result": "ok"}, "result", 'a string needs quotes: "ok"'),
        ({"handler_kind": "template", "template": ""}, "template", "write the reply"),
        ({"handler_kind": "rules", "rules": '[{"when": 3}]'}, "rules", "$[0].when"),
        ({"handler_kind": "rules", "rules": '[{"match": {"a": "("}}]'}, "rules", "invalid regex"),
        ({"handler_kind": "rules", "rules": "3"}, "rules", "JSON list of rules"),
        ({"handler_kind": "code", "source": "def handler(args)\n"}, "source", "line 1"),
        ({"handler_kind": "code", "source": "x = 1\n"}, "source", "def handler(args)"),
        ({"handler_kind": "python", "function": "nope"}, "function", "module:function"),
        ({"handler_kind": "python", "function": "no_such_mod:f"}, "function", "cannot import"),
        ({"handler_kind": "python", "function": "sample_tools.weather:nope"}, "function", "no"),
        ({"handler_kind": "mcp"}, "handler", "unknown handler kind 'mcp'"),
    ],
)
def test_form_refuses_a_bad_field_and_names_it(change, field, words):
    form = replace(ToolForm.from_entry(weather()), **change)
    with pytest.raises(ToolFormError) as err:
        entry_from_form(form, weather())
    assert err.value.field == field
    assert words in err.value.reason
    assert str(err.value).startswith(f"{field}: ")


def test_form_keeps_an_mcp_handler_while_its_kind_is_left_alone():
    server = McpServerSpec(url="http://localhost:9/mcp")
    entry = ToolEntry(tool=cases.WEATHER_TOOL, handler=McpHandler(server=server, tool="w"))
    form = replace(ToolForm.from_entry(entry), description="via MCP")
    assert form.handler_kind == "mcp"
    got = entry_from_form(form, entry)
    assert got.handler == entry.handler and got.tool.description == "via MCP"
    fixed = entry_from_form(replace(form, handler_kind="fixed"), entry)
    assert fixed.handler == FixedHandler(result="ok")


def test_apply_form_adds_a_new_tool_or_edits_the_picked_one():
    ts = sample_toolset("weather")
    new = replace(ToolForm(), name="ping")
    added = apply_form(ts, new)
    assert added.names == ["get_weather", "ping"]
    assert added.get("ping").handler == FixedHandler(result="ok")
    with pytest.raises(ToolFormError, match="exists already"):
        apply_form(added, new)
    edited = apply_form(added, replace(new, name="pong", description="d"), "ping")
    assert edited.names == ["get_weather", "pong"]
    assert edited.get("pong").tool.description == "d"


# -- table and findings ---------------------------------------------------------------------------


def test_findings_are_grouped_by_tool_for_the_chosen_protocols():
    ts = import_tools(
        sample_toolset("weather"), [Tool(name="camera.snapshot", parameters={"type": "object"})]
    )
    every = findings_by_tool(ts)
    assert every["get_weather"] == []
    assert {f.code for f in every["camera.snapshot"]} >= {
        "description_missing",
        "tool_name_invalid",
    }
    gemini_only = findings_by_tool(ts, ["gemini"])
    assert all(f.protocol in (None, "gemini") for f in gemini_only["camera.snapshot"])


def test_tool_rows_show_handler_timeout_destructive_and_findings():
    ts = import_tools(sample_toolset("weather"), TOOLS)
    rows = tool_rows(ts, findings_by_tool(ts), default_timeout=10)
    assert rows[0] == {
        "name": "get_weather",
        "description": "Get the current weather for a location.",
        "required": "location",
        "handler": "python",
        "timeout": "1 s",
        "destructive": "",
        "findings": 0,
        "errors": 0,
    }
    assert (rows[2]["name"], rows[2]["timeout"], rows[2]["destructive"]) == (
        "complete_task",
        "default (10 s)",
        "yes",
    )


def test_code_handlers_are_refused_when_the_deployment_disables_them(monkeypatch):
    from flowdebug.exchange.tools import ToolFormError, _code

    monkeypatch.setenv("FLOWDEBUG_DISABLE_CODE_HANDLERS", "1")
    with pytest.raises(ToolFormError, match="code handlers are disabled"):
        _code("def handler(args):\n    return 1\n")
    monkeypatch.delenv("FLOWDEBUG_DISABLE_CODE_HANDLERS")
    assert _code("def handler(args):\n    return 1\n").source.startswith("def handler")
