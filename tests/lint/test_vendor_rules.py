"""Each vendor's lint rules, stream reader and SDK facts live in its folder and are found
through the registry: the linter, the argument replay and the live player know no vendor."""

from __future__ import annotations

import dataclasses
import re

import pytest

from flowdebug import protocols
from flowdebug.lint.base.findings import Finding, Rule
from flowdebug.lint.linter import lint_conversation, lint_tools
from flowdebug.model import Conversation, Message, Text, Tool, ToolCall
from flowdebug.protocols.facts import LintRules


@pytest.mark.parametrize("name", protocols.PROTOCOLS)
def test_every_vendor_declares_its_history_rules(name):
    vendor = protocols.facts(name)
    assert vendor.lint.history is not None or vendor.turn_rules is not None


@pytest.mark.parametrize("name", protocols.model_protocols())
def test_every_model_vendor_declares_how_its_stream_carries_arguments(name):
    assert protocols.facts(name).stream_arguments is not None


def test_an_empty_call_id_quotes_the_id_each_encoder_sends_instead():
    call = ToolCall(id="", name="get_weather", arguments={})
    conv = Conversation(
        tools=[Tool(name="get_weather", description="Current weather for a city.")],
        messages=[
            Message(role="user", parts=[Text(text="hi")]),
            Message(role="assistant", parts=[call]),
        ],
    )
    found = {f.protocol: f for f in lint_conversation(conv) if f.code == "call_id_missing"}
    assert set(found) == {"anthropic", "openai-chat", "openai-responses", "gemini"}
    for name, f in found.items():
        sent = protocols.get(name).encode_request(conv).value
        assert repr(_first_call_id(sent)) in f.message, name


def _first_call_id(body):
    """The id the encoder gave the one call in ``body``, wherever the vendor keeps it."""
    text = repr(body)
    match = re.search(r"'(?:id|call_id)': '(call_[0-9a-f]{8})'", text)
    assert match, text
    return match.group(1)


@pytest.fixture
def toy():
    """Registers a vendor that only this test knows, the way a new folder would be (its
    codec through the registry's public function), and removes it afterwards."""

    def register(lint: LintRules) -> str:
        base = protocols.get("anthropic")
        toy_facts = dataclasses.replace(base.facts, name="toy", lint=lint, turn_rules=None)

        class Toy:
            name = title = "toy"
            facts = toy_facts

        protocols.register(Toy())  # type: ignore[arg-type]  # facts only: no codec is called
        return "toy"

    yield register
    protocols.unregister("toy")


def test_the_linter_applies_a_new_vendors_declared_rules_without_knowing_it(toy):
    def history(conv: Conversation) -> list[Finding]:
        return [
            Rule("error", "{n} messages").at("toy_history", "messages", "toy", n=len(conv.messages))
        ]

    def tool(i: int, t: Tool) -> list[Finding]:
        return [Rule("warning", "tool {name}").at("toy_tool", f"tools[{i}]", "toy", name=t.name)]

    name = toy(LintRules(history=history, tool=tool, duplicate_tool=Rule("error", "again {name}")))
    tools = [Tool(name="a", description="Adds two numbers."), Tool(name="a", description="Adds.")]
    conv = Conversation(tools=tools, messages=[Message(role="user", parts=[Text(text="hi")])])
    mine = [
        (f.code, f.path, f.message) for f in lint_conversation(conv, name) if f.protocol == name
    ]
    assert mine == [
        ("toy_tool", "tools[0]", "toy: tool a"),
        ("toy_tool", "tools[1]", "toy: tool a"),
        ("duplicate_tool_name", "tools[1].name", "toy: again a"),
        ("toy_history", "messages", "toy: 1 messages"),
    ]


def test_a_vendors_own_name_check_replaces_the_generic_one_unless_it_declines(toy):
    def name_check(i: int, t: Tool) -> list[Finding] | None:
        if t.name.startswith("x"):
            return []  # the vendor takes it, whatever its pattern says
        return None

    name = toy(LintRules(name=name_check))
    tools = [Tool(name="x.y", description="Takes dots."), Tool(name="a.b", description="Dots.")]
    codes = [(f.path, f.code) for f in lint_tools(tools, name) if f.protocol == name]
    assert codes == [("tools[1].name", "tool_name_invalid")]
