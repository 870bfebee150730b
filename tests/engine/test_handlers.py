"""Mock handlers, the code sandbox and the sample tools, run directly (no runtime)."""

from __future__ import annotations

import json
import os
import time

import pytest
from pydantic import BaseModel, Field, ValidationError

from flowdebug.engine.execution.canned_handlers import (
    FixedHandler,
    Reply,
    Rule,
    RulesHandler,
    TemplateHandler,
)
from flowdebug.engine.execution.handler_io import ToolContext, ToolError
from flowdebug.engine.execution.handlers import (
    HANDLER,
    CodeHandler,
    PythonHandler,
    ToolEntry,
    Toolset,
)
from flowdebug.engine.execution.python_tools import python_tool, schema_of
from flowdebug.engine.sandboxing.sandbox import run_code, scrubbed_env
from flowdebug.model import Tool
from sample_tools import TOOLSETS, toolset
from tests import cases

# ---- functions used as python handlers ("tests.engine.test_handlers:<name>") --------------------


def boom(args):
    raise ValueError(f"no data for {args['city']}")


def refuse(args):
    raise ToolError("slow down", error_type="rate_limited")


def returns_set(args):
    return {1, 2}


def echo_with_session(args, ctx):
    return {"session": ctx.session_id, "call": ctx.call_id, "args": args}


class Point(BaseModel):
    x: int


def returns_model(args):
    return Point(x=args["x"])


def run(handler, arguments=None, **ctx):
    return handler.run(arguments or {}, ToolContext(**ctx))


# ---- python ---------------------------------------------------------------------------


def test_python_handler_renders_a_json_value_as_json_text():
    out = run(PythonHandler(function="tests.engine.test_handlers:returns_model"), {"x": 3})
    assert (out.content, out.is_error, out.value) == ('{"x": 3}', False, {"x": 3})


def test_python_handler_exception_becomes_exception_error_with_its_message():
    out = run(PythonHandler(function="tests.engine.test_handlers:boom"), {"city": "Oslo"})
    assert (out.is_error, out.error_type) == (True, "exception")
    assert out.content == "ValueError: no data for Oslo"
    assert "Traceback" in out.log and "boom" in out.log


def test_python_handler_tool_error_chooses_the_error_type():
    out = run(PythonHandler(function="tests.engine.test_handlers:refuse"))
    assert (out.content, out.error_type) == ("slow down", "rate_limited")


def test_python_handler_returning_non_json_is_an_error_result():
    out = run(PythonHandler(function="tests.engine.test_handlers:returns_set"))
    assert out.is_error and "handler returned set, which is not a JSON value" in out.content


def test_python_handler_that_cannot_be_imported_is_an_error_result():
    out = run(PythonHandler(function="tests.no_such_module:fn"))
    assert out.error_type == "exception"
    assert out.content.startswith("ModuleNotFoundError: No module named 'tests.no_such_module'")
    out = run(PythonHandler(function="tests.engine.test_handlers:missing"))
    assert "has no attribute 'missing'" in out.content


def test_python_handler_receives_the_context_when_it_takes_two_parameters():
    handler = PythonHandler(function="tests.engine.test_handlers:echo_with_session")
    out = run(handler, {"a": 1}, session_id="s1", call_id="c1")
    assert out.value == {"session": "s1", "call": "c1", "args": {"a": 1}}


def test_python_handler_reference_must_be_module_colon_function():
    with pytest.raises(ValidationError):
        PythonHandler(function="tests.engine.test_handlers.boom")


# ---- declarative --------------------------------------------------------------------


def test_fixed_handler_returns_its_result_or_its_error():
    assert run(FixedHandler(result={"ok": True})).content == '{"ok": true}'
    err = run(FixedHandler(result="city not found", is_error=True))
    assert (err.content, err.is_error, err.error_type) == ("city not found", True, "exception")
    typed = run(FixedHandler(result="no", is_error=True, error_type="permission"))
    assert typed.error_type == "permission"


def test_template_handler_fills_the_arguments():
    out = run(TemplateHandler(template="It is sunny in {location}"), {"location": "Paris"})
    assert (out.content, out.is_error) == ("It is sunny in Paris", False)


def test_template_handler_names_the_missing_argument():
    out = run(TemplateHandler(template="{location}: {unit}"), {"location": "Paris"})
    assert out.is_error
    assert out.content == (
        "the result template needs the argument 'unit', which the call did not send "
        "(arguments sent: location)"
    )


def test_template_handler_with_a_broken_template_is_an_error_result():
    out = run(TemplateHandler(template="{location"), {"location": "Paris"})
    assert out.is_error and out.content.startswith("cannot fill the result template")


RULES = RulesHandler(
    rules=[
        Rule(when={"location": "Paris"}, result={"temperature": 18}),
        Rule(match={"location": "(?i)^tok"}, result="service down", is_error=True),
        Rule(when={"unit": "f"}, match={"location": "^L"}, result="cold", delay=0.2),
    ],
    default=Reply(result="no data"),
)


def test_rules_handler_returns_the_first_rule_whose_fields_match():
    assert run(RULES, {"location": "Paris", "unit": "c"}).content == '{"temperature": 18}'
    tokyo = run(RULES, {"location": "tokyo"})
    assert (tokyo.content, tokyo.is_error) == ("service down", True)
    assert run(RULES, {"location": "Rome"}).content == "no data"


def test_rules_handler_waits_the_rule_delay_before_replying():
    started = time.perf_counter()
    out = run(RULES, {"location": "London", "unit": "f"})
    assert out.content == "cold"
    assert time.perf_counter() - started >= 0.2


def test_rules_handler_without_default_reports_unmatched_arguments():
    out = run(RulesHandler(rules=RULES.rules), {"location": "Rome"})
    assert out.is_error and out.content == 'no mock rule matches the arguments {"location": "Rome"}'


def test_rule_matches_non_string_arguments_as_json():
    rule = Rule(match={"days": "^[1-3]$"})
    assert rule.applies({"days": 2}) and not rule.applies({"days": 5})
    assert not rule.applies({})


def test_rule_with_an_invalid_regex_is_refused_when_defined():
    with pytest.raises(ValidationError, match=r"match.location: invalid regex"):
        Rule(match={"location": "(unclosed"})


@pytest.mark.parametrize(
    "handler",
    [
        PythonHandler(function="sample_tools.weather:get_weather"),
        FixedHandler(result={"a": [1, 2]}, is_error=True, delay=0.5),
        TemplateHandler(template="hi {name}"),
        RULES,
        CodeHandler(source="def handler(args):\n    return 1\n", memory_mb=128),
    ],
    ids=lambda h: h.kind,
)
def test_every_handler_kind_survives_a_json_round_trip(handler):
    data = json.loads(json.dumps(HANDLER.dump_python(handler, mode="json")))
    assert data["kind"] == handler.kind
    assert HANDLER.validate_python(data) == handler


# ---- code (child process) ------------------------------------------------------------


def code(source: str, arguments=None, timeout=5.0, **kw):
    ctx = ToolContext(deadline=time.monotonic() + timeout)
    return CodeHandler(source=source, **kw).run(arguments or {}, ctx)


def test_code_handler_returns_the_value_and_logs_what_it_printed():
    out = code(
        "def handler(args):\n    print('working')\n    return {'double': args['n'] * 2}", {"n": 21}
    )
    assert (out.content, out.is_error) == ('{"double": 42}', False)
    assert out.log == "working\n"


def test_code_handler_returning_none_answers_with_its_printed_output():
    out = code("def handler(args):\n    print('line one')")
    assert out.content == "line one\n"


def test_code_handler_exception_returns_the_traceback_of_the_person_code():
    out = code("def handler(args):\n    return 1 / 0\n")
    assert (out.is_error, out.error_type) == (True, "exception")
    assert out.content.startswith("Traceback (most recent call last):\n")
    assert 'File "<handler>", line 2, in handler' in out.content
    assert out.content.rstrip().endswith("ZeroDivisionError: division by zero")
    assert "sandbox_child.py" not in out.content


def test_code_handler_without_a_handler_function_says_so():
    out = code("x = 1\n")
    assert "NameError: the code must define a function handler(args)" in out.content


def test_code_handler_that_exits_the_worker_process_yields_a_crash_error():
    out = code("import os\ndef handler(args):\n    print('bye')\n    os._exit(3)\n")
    assert (out.is_error, out.error_type) == (True, "crash")
    assert out.content == "the handler process died (exit code 3)"
    assert out.log == "bye\n"


def test_code_handler_that_segfaults_yields_a_crash_error_with_the_stack():
    out = code("import ctypes\ndef handler(args):\n    return ctypes.string_at(0)\n")
    assert out.error_type == "crash"
    assert out.content.startswith("the handler process died (signal SIGSEGV)")
    assert "Segmentation fault" in out.content and '"<handler>", line 3' in out.content


def test_code_handler_memory_limit_stops_a_huge_allocation():
    out = code("def handler(args):\n    return len(bytearray(4 * 1024**3))\n", memory_mb=128)
    assert (out.is_error, out.error_type) == (True, "exception")
    assert out.content.rstrip().endswith("MemoryError")


def test_code_handler_environment_has_no_api_keys(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-test")
    monkeypatch.setenv("DB_PASSWORD", "hunter2")
    out = code("import os\ndef handler(args):\n    return dict(os.environ)\n")
    assert not out.is_error
    env = out.value
    assert "ANTHROPIC_API_KEY" not in env and "GITHUB_TOKEN" not in env
    assert not any(v in json.dumps(env) for v in ("sk-ant-test", "ghp-test", "hunter2"))
    allowed = {"PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "SYSTEMROOT"}
    assert set(env) <= allowed | {"HOME", "TMPDIR", "FLOWDEBUG_SANDBOX"}
    assert env["HOME"] == env["TMPDIR"] != os.environ.get("HOME")  # its own fresh directory
    assert len(env["FLOWDEBUG_SANDBOX"]) == 32  # a mark, not a value of the server's


def test_scrubbed_env_keeps_only_allowed_names_that_do_not_look_secret():
    env = scrubbed_env({"PATH": "/bin", "LANG": "C", "OPENAI_API_KEY": "x", "HOME": "/root"})
    assert env == {"PATH": "/bin", "LANG": "C"}


def test_code_handler_hang_is_killed_at_the_deadline():
    started = time.perf_counter()
    res = run_code("import time\ndef handler(args):\n    time.sleep(1000)\n", {}, timeout=0.5)
    assert res.status == "timeout"
    assert time.perf_counter() - started < 1.0
    with pytest.raises(ProcessLookupError):
        os.kill(res.pid, 0)


def test_code_handler_check_reports_a_syntax_error_with_its_line():
    assert CodeHandler(source="def handler(args):\n    return (\n").check() == (
        "line 2: '(' was never closed"
    )
    assert CodeHandler(source="def handler(args):\n    return 1\n").check() is None


# ---- declarations and tool sets -----------------------------------------------------


class Args(BaseModel):
    title: str = Field(description="Task title")
    tags: list[str] = []


def test_schema_from_a_pydantic_model_drops_generated_titles_but_keeps_a_title_property():
    assert schema_of(Args) == {
        "type": "object",
        "properties": {
            "title": {"type": "string", "description": "Task title"},
            "tags": {"type": "array", "items": {"type": "string"}, "default": []},
        },
        "required": ["title"],
    }


def test_python_tool_takes_name_and_description_from_the_function():
    entry = python_tool(boom, {"type": "object"}, timeout=2.0)
    assert entry.tool.name == "boom" and entry.tool.description is None
    assert entry.handler == PythonHandler(function="tests.engine.test_handlers:boom")
    assert entry.timeout == 2.0


def test_toolset_refuses_two_tools_with_one_name():
    entry = ToolEntry(tool=Tool(name="t"), handler=FixedHandler())
    with pytest.raises(ValidationError, match="two tools are named 't'"):
        Toolset(entries=[entry, entry])


def test_toolset_with_entry_replaces_the_tool_of_that_name():
    ts = Toolset(entries=[ToolEntry(tool=Tool(name="t"), handler=FixedHandler(result="a"))])
    ts2 = ts.with_entry(ToolEntry(tool=Tool(name="t"), handler=FixedHandler(result="b")))
    ts3 = ts2.with_entry(ToolEntry(tool=Tool(name="u"), handler=FixedHandler()))
    assert ts2.get("t").handler.result == "b" and ts.get("t").handler.result == "a"
    assert ts3.names == ["t", "u"]


def test_toolset_survives_a_json_round_trip():
    every = toolset(*TOOLSETS)
    assert Toolset.model_validate_json(every.model_dump_json()) == every


# ---- sample tools --------------------------------------------------------------------


def sample(name: str, arguments: dict, ctx: ToolContext | None = None):
    entry = toolset(*TOOLSETS).get(name)
    return entry.handler.run(arguments, ctx or ToolContext())


def test_sample_tool_sets_declare_the_expected_tools():
    assert {k: v.names for k, v in TOOLSETS.items()} == {
        "weather": ["get_weather"],
        "tasks": ["create_task", "update_task", "complete_task", "delete_task", "list_tasks"],
        "files": ["read_file", "list_dir"],
        "shell": ["run_command"],
    }
    destructive = [t.name for ts in TOOLSETS.values() for t in ts.tools if t.destructive]
    assert destructive == ["delete_task", "run_command"]


def test_weather_tool_matches_the_canonical_scenario():
    entry = TOOLSETS["weather"].get("get_weather")
    assert entry.tool == cases.WEATHER_TOOL
    assert entry.timeout == 1.0
    paris = sample("get_weather", cases.PARIS.arguments)
    assert paris.content == cases.PARIS_RESULT.content


def test_weather_tool_converts_to_fahrenheit_and_refuses_unknown_cities():
    assert sample("get_weather", {"location": "Sydney", "unit": "f"}).value["temperature"] == 77
    out = sample("get_weather", {"location": "Atlantis"})
    assert out.is_error and "known cities: Paris, London, New York, Sydney" in out.content


def test_weather_tokyo_hang_ends_when_the_call_is_abandoned():
    ctx = ToolContext()
    ctx.cancelled.set()
    out = sample("get_weather", {"location": "Tokyo"}, ctx)
    assert out.error_type == "timeout"


def test_task_tools_keep_their_store_in_the_session_state():
    ctx = ToolContext()
    assert sample("create_task", {"title": "buy milk"}, ctx).value["id"] == "T-1"
    assert sample("create_task", {"title": "call Alice"}, ctx).value["id"] == "T-2"
    sample("update_task", {"task_id": "T-2", "notes": "after 5pm"}, ctx)
    assert sample("complete_task", {"task_id": "T-1"}, ctx).value["done"] is True
    assert [t["id"] for t in sample("list_tasks", {"status": "open"}, ctx).value] == ["T-2"]
    assert sample("delete_task", {"task_id": "T-1"}, ctx).value == {"deleted": "T-1"}
    assert ctx.state["tasks"]["items"] == {
        "T-2": {"id": "T-2", "title": "call Alice", "notes": "after 5pm", "done": False}
    }
    missing = sample("complete_task", {"task_id": "T-9"}, ctx)
    assert missing.is_error and missing.content == "no task 'T-9'; existing tasks: T-2"
    assert sample("list_tasks", {}, ToolContext()).value == []


def test_file_tools_read_the_fake_tree_and_refuse_traversal():
    assert sample("list_dir", {}).value == ["README.md", "notes/", "src/"]
    assert sample("list_dir", {"path": "notes"}).value == ["ideas.md", "todo.txt"]
    assert sample("read_file", {"path": "/notes/todo.txt"}).content == "- buy milk\n- call Alice\n"
    escape = sample("read_file", {"path": "/notes/../../etc/passwd"})
    assert (escape.error_type, escape.content) == (
        "permission",
        "permission denied: path traversal refused: '/notes/../../etc/passwd'",
    )
    missing = sample("read_file", {"path": "/notes"})
    assert (
        missing.content
        == "FileNotFoundError: no such file: /notes (it is a directory: use list_dir)"
    )


def test_shell_tool_answers_known_commands_and_refuses_others():
    assert sample("run_command", {"command": "echo   hello"}).value == {
        "exit_code": 0,
        "stdout": "hello\n",
        "stderr": "",
    }
    refused = sample("run_command", {"command": "rm -rf /"})
    assert refused.error_type == "permission"
    assert refused.content.startswith("permission denied: command not allowed: 'rm -rf /'")
