"""Finding codes are a closed set: declared once (``FindingCode`` and ``FINDING_CODES``), every
code the source passes is declared, every declared code is used, and every code the linter
emits at runtime is declared."""

from __future__ import annotations

import ast
import functools
import typing
from pathlib import Path

from flowdebug.lint.base.codes import FINDING_CODES, FindingCode
from flowdebug.lint.linter import lint_conversation
from flowdebug.model import Conversation, Message, Text, Tool, ToolCall, ToolResult
from tests.cases import CONVERSATIONS, PARIS, PARIS_RESULT, TOKYO, TOKYO_RESULT, WEATHER_TOOL
from tests.source_scan import FLOWDEBUG, flowdebug_trees, strings_in, walk

DECLARED = set(typing.get_args(FindingCode))


def _passed_codes(tree: ast.Module) -> list[ast.expr]:
    """The expressions passed as a finding's code: ``rule.at(code, ...)``,
    ``Finding(level, code, ...)``, ``finding(level, code, ...)``, the pairing table's values
    and what is annotated ``FindingCode``."""
    out: list[ast.expr] = []
    for node in walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
            index = {"at": 0, "Finding": 1, "finding": 1}.get(str(name))
            if index is not None and len(node.args) > index:
                out.append(node.args[index])
            out += [k.value for k in node.keywords if k.arg == "code" and index is not None]
        elif isinstance(node, ast.AnnAssign) and "FindingCode" in ast.unparse(node.annotation):
            if isinstance(node.value, ast.Dict):
                out += [v for v in node.value.values if v is not None]
            elif node.value is not None:
                out.append(node.value)
    return out


def source_codes(trees: dict[Path, ast.Module]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path, tree in trees.items():
        if path.name == "codes.py":
            continue  # the declaration itself
        for value, where in strings_in(path, _passed_codes(tree)):
            found.setdefault(value, []).append(where)
    return found


@functools.cache
def flowdebug_codes() -> dict[str, list[str]]:
    """The codes flowdebug's source passes, read when a test first asks (not while the module
    is collected: every worker collects it) from the trees the other source scans share."""
    return source_codes(flowdebug_trees())


def test_finding_code_type_and_meanings_declare_the_same_codes():
    assert set(FINDING_CODES) == DECLARED
    assert len(DECLARED) == len(typing.get_args(FindingCode))  # no code declared twice
    assert all(m.strip() and "\n" not in m for m in FINDING_CODES.values())


def test_every_code_the_source_passes_is_declared():
    undeclared = {c: w for c, w in flowdebug_codes().items() if c not in DECLARED}
    assert undeclared == {}


def test_every_declared_code_is_passed_somewhere_in_the_source():
    assert sorted(DECLARED - flowdebug_codes().keys()) == []


def test_source_scan_sees_codes_in_the_pairing_table_and_in_a_conditional():
    assert any("lint/base/pairing.py" in w for w in flowdebug_codes()["results_not_adjacent"])
    assert any("gemini/rules.py" in w for w in flowdebug_codes()["first_message_not_user"])
    found = source_codes({FLOWDEBUG / "x.py": ast.parse("RULE.at('made_up', '$')")})
    assert found == {"made_up": ["flowdebug/x.py:1"]}


BAD_TOOL = Tool(
    name="do stuff!",
    description="",
    parameters={"type": "object", "properties": {"mode": {"type": "string"}, "n": {}}},
)


def broken_histories() -> list[Conversation]:
    """Histories each vendor has something to say about: a dropped result, results out of
    order, text before them, a duplicate, no tools declared, a call awaiting its result."""
    user = Message(role="user", parts=[Text(text="Weather in Paris and Tokyo?")])
    calls = Message(role="assistant", parts=[PARIS, TOKYO])
    other = ToolCall(id="call_x", name="get_time", arguments={})
    shapes = [
        [user, calls, Message(role="tool", parts=[TOKYO_RESULT])],
        [user, calls, Message(role="tool", parts=[TOKYO_RESULT, PARIS_RESULT])],
        [user, calls, Message(role="user", parts=[Text(text="hm"), PARIS_RESULT, TOKYO_RESULT])],
        [user, calls, Message(role="tool", parts=[PARIS_RESULT, PARIS_RESULT, TOKYO_RESULT])],
        [calls, calls, Message(role="assistant", parts=[other])],
        [user, Message(role="tool", parts=[ToolResult(call_id="nope", content="x")])],
    ]
    return [Conversation(tools=[WEATHER_TOOL], messages=m) for m in shapes] + [
        Conversation(tools=[BAD_TOOL, BAD_TOOL], messages=[user, calls]),
        Conversation(messages=[user, calls, Message(role="tool", parts=[PARIS_RESULT])]),
    ]


def test_every_code_the_linter_emits_is_declared():
    emitted = {
        f.code
        for conv in [*CONVERSATIONS.values(), *broken_histories()]
        for f in lint_conversation(conv)
    }
    assert emitted - DECLARED == set()
    assert len(emitted) >= 15  # the histories above reach most of the rules
