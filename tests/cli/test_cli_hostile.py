"""Hostile input on the command line: one line naming the problem, exit 2, no traceback."""

from __future__ import annotations

import json

import pytest

from flowdebug.cli.main import main
from flowdebug.jsontext import MAX_DEPTH

COMMANDS = (["convert", "--to", "openai-chat"], ["lint"])


def request_with_arguments(arguments: str) -> str:
    return (
        '{"model": "m", "max_tokens": 5, "messages": [{"role": "assistant", "content": '
        '[{"type": "tool_use", "id": "t", "name": "n", "input": ' + arguments + "}]}]}"
    )


def run(capsys, tmp_path, command: list[str], text: str) -> tuple[int, str]:
    path = tmp_path / "input.json"
    path.write_text(text, encoding="utf-8")
    code = main([*command, str(path)])
    err = capsys.readouterr().err
    return code, err


@pytest.mark.parametrize("command", COMMANDS, ids=["convert", "lint"])
@pytest.mark.parametrize("depth", [300, 1_000, 100_000])
def test_deep_json_is_refused_in_one_line(command, depth, capsys, tmp_path):
    code, err = run(capsys, tmp_path, command, "[" * depth + "]" * depth)
    assert code == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"{MAX_DEPTH} levels" in err


@pytest.mark.parametrize("command", COMMANDS, ids=["convert", "lint"])
def test_deep_arguments_are_refused_with_their_path(command, capsys, tmp_path):
    deep = '{"a": ' * 400 + "1" + "}" * 400
    code, err = run(capsys, tmp_path, command, request_with_arguments(deep))
    assert code == 2 and err.count("\n") == 1
    assert "$.messages[0].content[0].input.a.a" in err and "nested more than" in err


@pytest.mark.parametrize("command", COMMANDS, ids=["convert", "lint"])
@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_refused_with_their_path(command, constant, capsys, tmp_path):
    code, err = run(capsys, tmp_path, command, request_with_arguments('{"x": ' + constant + "}"))
    assert code == 2
    assert err == (
        f"flowdebug: {tmp_path / 'input.json'}: $.messages[0].content[0].input.x: "
        f"{constant} is not a JSON number\n"
    )


@pytest.mark.parametrize("command", COMMANDS, ids=["convert", "lint"])
@pytest.mark.parametrize("raw", ["\x00", "\x1b[31m", "a\x07b"])
def test_raw_control_characters_are_refused_in_one_line(command, raw, capsys, tmp_path):
    code, err = run(capsys, tmp_path, command, request_with_arguments('{"x": "' + raw + '"}'))
    assert code == 2 and err.count("\n") == 1
    assert "not valid JSON: Invalid control character" in err


@pytest.mark.parametrize("command", COMMANDS, ids=["convert", "lint"])
@pytest.mark.parametrize("text", ["", "   \n", "\ufeff"])
def test_empty_input_is_refused_in_one_line(command, text, capsys, tmp_path):
    code, err = run(capsys, tmp_path, command, text)
    assert code == 2 and err.count("\n") == 1 and "not valid JSON" in err


def test_escaped_control_characters_are_text_and_convert_faithfully(capsys, tmp_path):
    code = main(
        ["convert", "--to", "openai-chat", str(_write(tmp_path, '{"x": "a\\u0000b\\u001b"}'))]
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    arguments = out["messages"][0]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(arguments) == {"x": "a\x00b\x1b"}


def _write(tmp_path, arguments: str):
    path = tmp_path / "ok.json"
    path.write_text(request_with_arguments(arguments), encoding="utf-8")
    return path
