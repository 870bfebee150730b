"""Hostile input at the app's entrances (paste on the Tools page, import, history edits, the
tool editor): a clear message naming the JSON path, and nothing changed."""

from __future__ import annotations

import json
import sys

import pytest

from flowdebug import jsontext
from flowdebug.engine.session.debugger import Session
from flowdebug.errors import CodecError, FlowdebugError
from flowdebug.exchange.imports import import_session
from flowdebug.exchange.tool_imports import parse_tools
from flowdebug.exchange.tools import ToolForm, ToolFormError, apply_form
from flowdebug.store.sessions import open_store
from tests.paths import FIXTURES

DEEP = {
    "1000-deep": "[" * 1_000 + "]" * 1_000,
    "100000-deep": "[" * 100_000 + "]" * 100_000,
    "1000-deep objects": '{"a":' * 1_000 + "1" + "}" * 1_000,
    "300-deep (pydantic's limit)": "[" * 300 + "]" * 300,
}
NOT_JSON = {
    "empty": "",
    "blank": "  \n\t",
    "BOM only": "\ufeff",
    "raw NUL": '{"kind": "text", "text": "a\x00b"}',
    "raw ESC": '{"kind": "text", "text": "\x1b[31mred"}',
    "U+FFFE outside a string": '\ufffe{"kind": "text", "text": "x"}',
}
CONSTANTS = ["NaN", "Infinity", "-Infinity"]


def anthropic_request(text: str = '"hi"', tool_input: str = "{}") -> str:
    return (
        '{"model": "m", "max_tokens": 5, "tools": [{"name": "t", "input_schema": '
        '{"type": "object"}}], "messages": [{"role": "user", "content": ' + text + "}, "
        '{"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "t", '
        '"input": ' + tool_input + "}]}]}"
    )


def one_line(e: BaseException) -> str:
    text = str(e)
    assert "\n" not in text and "Traceback" not in text
    return text


# -- the shared reader ---------------------------------------------------------------------


@pytest.mark.parametrize("text", DEEP.values(), ids=DEEP.keys())
def test_deep_json_is_refused_before_any_model_sees_it(text):
    with pytest.raises(CodecError, match=f"more than {jsontext.MAX_DEPTH} levels"):
        jsontext.loads(text)


def test_a_parsed_value_of_any_depth_is_checked_without_recursion():
    value: list = []
    for _ in range(200_000):
        value = [value]
    with pytest.raises(CodecError, match="nested more than"):
        jsontext.check(value)


@pytest.mark.parametrize("constant", CONSTANTS)
def test_nan_and_infinity_are_refused_with_their_path(constant):
    with pytest.raises(CodecError) as info:
        jsontext.loads('{"a": [1, ' + constant + "]}")
    assert info.value.path == "$.a[1]" and info.value.reason == f"{constant} is not a JSON number"
    with pytest.raises(CodecError, match=r"\$\.x: (nan|inf|-inf) is not a JSON number"):
        jsontext.check({"x": float(constant.lower().replace("infinity", "inf"))})


def test_escaped_control_characters_and_noncharacters_are_text():
    assert jsontext.loads('"a\\u0000b\\u001b\ufffe"') == "a\x00b\x1b\ufffe"


def test_json_lines_give_a_list_and_a_bad_line_is_named():
    assert jsontext.loads('{"a": 1}\n\n{"b": 2}\n', lines=True) == [{"a": 1}, {"b": 2}]
    with pytest.raises(CodecError, match="line 2: not valid JSON"):
        jsontext.loads('{"a": 1}\n{"b": NaN', lines=True)
    with pytest.raises(CodecError, match=r"\$\[1\]\.b: NaN is not a JSON number"):
        jsontext.loads('{"a": 1}\n{"b": NaN}', lines=True)


# -- import (Sessions page) ------------------------------------------------------------------

IMPORT_BAD = {
    **DEEP,
    **NOT_JSON,
    "deep arguments": anthropic_request(tool_input='{"a": ' * 400 + "1" + "}" * 400),
    **{c: anthropic_request(tool_input='{"x": ' + c + "}") for c in CONSTANTS},
}


@pytest.mark.parametrize("text", IMPORT_BAD.values(), ids=IMPORT_BAD.keys())
def test_import_refuses_hostile_text_and_saves_nothing(text, tmp_path):
    with open_store(str(tmp_path / "s.db")) as store:
        for data in (text, text.encode("utf-8", "surrogatepass")):
            with pytest.raises(CodecError) as info:
                import_session(data, store=store)
            one_line(info.value)
        assert store.list() == []


def test_import_names_the_path_of_nan_in_the_arguments():
    with pytest.raises(CodecError) as info:
        import_session(anthropic_request(tool_input='{"x": NaN}'))
    assert info.value.path == "$.messages[1].content[0].input.x"


def test_import_refuses_a_parsed_payload_holding_infinity():
    payload = json.loads(anthropic_request())
    payload["messages"][1]["content"][0]["input"] = {"x": float("inf")}
    with pytest.raises(CodecError, match=r"input\.x: inf is not a JSON number"):
        import_session(payload)


def test_import_keeps_escaped_control_characters_and_noncharacters_as_text(tmp_path):
    text = "a\x00b\x1bc\ufffed"
    data = anthropic_request(text=json.dumps(text))
    with open_store(str(tmp_path / "s.db")) as store:
        imported = import_session(data, store=store)
        saved = store.load(imported.state.id)
    assert saved.conversation.messages[0].parts[0].text == text


# -- paste (Tools page) ----------------------------------------------------------------------

PASTE_BAD = {
    **DEEP,
    **NOT_JSON,
    **{
        c: '[{"name": "t", "input_schema": {"type": "object", "maximum": ' + c + "}}]"
        for c in CONSTANTS
    },
}


@pytest.mark.parametrize("text", PASTE_BAD.values(), ids=PASTE_BAD.keys())
def test_paste_refuses_hostile_text(text):
    with pytest.raises(CodecError) as info:
        parse_tools(text)
    one_line(info.value)


@pytest.mark.parametrize("field", ["parameters", "result", "annotations", "rules"])
@pytest.mark.parametrize(
    "text", [DEEP["1000-deep"], DEEP["100000-deep"], '{"x": NaN}', '{"x": "\x00"}']
)
def test_tool_editor_refuses_hostile_json_in_every_json_field(field, text):
    session = Session.from_scenario("weather")
    before = session.state.toolset
    kind = "rules" if field == "rules" else "fixed"
    form = ToolForm(name="t", handler_kind=kind, **{field: text})
    with pytest.raises(ToolFormError) as info:
        session.set_toolset(apply_form(session.state.toolset, form))
    assert info.value.field == field
    assert "Traceback" not in one_line(info.value)
    assert session.state.toolset == before and session.state.step == 0


# -- history edits (History page) ------------------------------------------------------------

EDIT_BAD = {**DEEP, **NOT_JSON, **{c: '{"kind": "text", "text": ' + c + "}" for c in CONSTANTS}}


@pytest.mark.parametrize("text", EDIT_BAD.values(), ids=EDIT_BAD.keys())
def test_history_edits_refuse_hostile_text_and_change_nothing(text):
    session = Session.from_scenario("weather")
    session.step_turn()
    before = session.state.conversation
    undo = len(session.undo_stack)
    for edit in (
        lambda: session.edit_part(0, 0, text),
        lambda: session.edit_message(0, text),
        lambda: session.insert_message(1, text),
    ):
        with pytest.raises(FlowdebugError) as info:
            edit()
        assert one_line(info.value).startswith("messages[")
    assert session.state.conversation == before and len(session.undo_stack) == undo


def test_history_edit_names_the_path_of_infinity():
    session = Session.from_scenario("weather")
    with pytest.raises(FlowdebugError, match=r"messages\[0\]\.parts\[0\]\.n: Infinity is not"):
        session.edit_part(0, 0, '{"kind": "text", "text": "x", "n": Infinity}')


def test_history_edit_refuses_a_deep_dict():
    session = Session.from_scenario("weather")
    deep: dict = {"kind": "text", "text": "x"}
    for _ in range(500):
        deep = {"a": deep}
    with pytest.raises(FlowdebugError, match="nested more than"):
        session.edit_message(0, {"role": "user", "parts": [deep]})


def test_history_edit_keeps_escaped_control_characters_as_text():
    session = Session.from_scenario("weather")
    session.edit_part(0, 0, '{"kind": "text", "text": "a\\u0000\\u001b\ufffe"}')
    assert session.conversation.messages[0].parts[0].text == "a\x00\x1b\ufffe"


# -- one size cap, bytes and str alike ------------------------------------------------------

TOO_LARGE = {
    "ASCII": " " * jsontext.MAX_BYTES + "{}",
    # fewer characters than the cap, more bytes of UTF-8 than it
    "two bytes a character": '"' + "é" * (jsontext.MAX_BYTES // 2) + '"',
}


@pytest.mark.parametrize("text", TOO_LARGE.values(), ids=TOO_LARGE.keys())
def test_the_size_cap_holds_for_text_and_bytes_alike(text):
    for data in (text, text.encode("utf-8")):
        for read in (jsontext.loads, import_session):
            with pytest.raises(CodecError, match=f"larger than {jsontext.MAX_BYTES // 2**20} MiB"):
                read(data)


def test_text_just_under_the_size_cap_is_read():
    text = "[" + " " * (jsontext.MAX_BYTES - 2) + "]"
    assert jsontext.loads(text) == [] and jsontext.loads(text.encode()) == []


# -- non-finite numbers refused at every entrance --------------------------------------------

NON_FINITE = ['{"a": 1e999}', '{"a": -1e999}', '{"a": NaN}', '{"a": Infinity}']


def _entrances_of_text():
    from flowdebug.cli.main import main
    from flowdebug.protocols.convert import load_json

    def cli(*command):
        def run(text, tmp_path):
            path = tmp_path / "in.json"
            path.write_text(text, encoding="utf-8")
            return main([*command, str(path)])

        return run

    return {
        "flowdebug convert": cli("convert", "--to", "anthropic"),
        "flowdebug lint": cli("lint"),
        "load_json": lambda text, _: load_json(text),
        "import_session": lambda text, _: import_session(text),
        "paste": lambda text, _: parse_tools(text),
        "history edit": lambda text, _: Session.from_scenario("weather").edit_part(0, 0, text),
    }


@pytest.mark.parametrize("entrance", list(_entrances_of_text()))
@pytest.mark.parametrize("text", NON_FINITE)
def test_non_finite_numbers_are_refused_at_every_entrance(entrance, text, tmp_path, capsys):
    try:
        code = _entrances_of_text()[entrance](text, tmp_path)
    except FlowdebugError as e:
        assert "is not a JSON number" in one_line(e)
        return
    err = capsys.readouterr().err
    assert code == 2 and "$.a: " in err and "is not a JSON number" in err


def test_parsed_non_finite_numbers_are_refused_by_the_library():
    from flowdebug.lint.linter import lint_payload
    from flowdebug.protocols.convert import convert

    payload = json.loads(anthropic_request())
    payload["messages"][1]["content"][0]["input"] = {"x": float("nan")}
    for call in (lambda: convert(payload, "gemini"), lambda: lint_payload(payload)):
        with pytest.raises(CodecError, match=r"content\[0\]\.input\.x: nan is not a JSON number"):
            call()


# -- parsed values: the depth limit holds for objects too ------------------------------------


def _nested(depth: int) -> dict:
    value: dict = {"kind": "text", "text": "x"}
    for _ in range(depth):
        value = {"a": value}
    return value


def test_a_parsed_value_nested_5000_deep_is_refused_by_every_public_function():
    from flowdebug.lint.linter import lint_payload
    from flowdebug.protocols.convert import TARGETS, convert

    payload = json.loads(anthropic_request())
    payload["messages"][1]["content"][0]["input"] = _nested(5000)
    calls = {f"convert {t}": (lambda t=t: convert(payload, t)) for t in TARGETS}
    calls |= {
        "lint_payload": lambda: lint_payload(payload),
        "import_session": lambda: import_session(payload),
        "parse_tools": lambda: parse_tools(
            {"tools": [{"name": "t", "input_schema": _nested(5000)}]}
        ),
    }
    for name, call in calls.items():
        with pytest.raises(CodecError, match=f"more than {jsontext.MAX_DEPTH} levels") as info:
            call()
        assert info.value.path.startswith("$."), name


def test_arguments_nested_deep_inside_a_string_stay_text():
    from flowdebug.protocols.convert import convert

    deep = '{"a": ' * 300 + "1" + "}" * 300
    payload = {
        "model": "m",
        "messages": [
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": "c", "type": "function", "function": {"name": "f", "arguments": deep}}
                ],
            }
        ],
    }
    out, warnings = convert(payload, "anthropic")
    assert out["messages"][0]["content"][0]["input"] == {}
    assert [w.code for w in warnings if w.code == "raw_arguments_dropped"] == [
        "raw_arguments_dropped"
    ]
    out, _ = convert(payload, "openai-chat")
    assert out["messages"][0]["tool_calls"][0]["function"]["arguments"] == deep


# -- the inputs that crashed the library when fuzzed (tests/fixtures/fuzz) -------------------

FUZZED = sorted((FIXTURES / "fuzz").glob("*.bin"))


def test_every_fuzzed_input_is_kept():
    # The reproductions hold 21 inputs and their README (issue 28 counted 22 files).
    assert len(FUZZED) == 21


@pytest.mark.parametrize("path", FUZZED, ids=[p.name for p in FUZZED])
def test_a_once_crashing_input_gives_a_result_or_a_flowdebug_error_at_every_entrance(path, capsys):
    from flowdebug.cli.main import main
    from flowdebug.lint.linter import lint_payload
    from flowdebug.protocols.convert import TARGETS, convert

    data = path.read_bytes()
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(10_000)  # some nest about 990 levels: read them as a caller could
    try:
        payload = json.loads(data)
    finally:
        sys.setrecursionlimit(limit)
    calls = {f"convert {t}": (lambda t=t: convert(payload, t)) for t in TARGETS}
    calls |= {
        "lint_payload": lambda: lint_payload(payload),
        "import_session (bytes)": lambda: import_session(data),
        "import_session (parsed)": lambda: import_session(payload),
    }
    deep = "AttributeError" not in path.name  # all but one nest far too deep
    for name, call in calls.items():
        if deep:
            with pytest.raises(CodecError, match=f"{jsontext.MAX_DEPTH} levels"):
                call()
        else:
            assert call() is not None, name
    for target in TARGETS:
        code = main(["convert", str(path), "--to", target])
        err = capsys.readouterr().err
        assert code == (2 if deep else 0), err
        assert ("levels" in err) if deep else "internal error" not in err


def test_a_web_search_whose_action_is_a_number_converts_with_its_call():
    from flowdebug.protocols.convert import decode

    payload = json.loads(
        (FIXTURES / "fuzz" / "crash-3-AttributeError-hosted.py_119.bin").read_bytes()
    )
    parts = decode(payload).response.message.parts
    calls = [p for p in parts if p.kind == "hosted_call"]
    assert [(c.name, c.arguments) for c in calls] == [("web_search", {})]
