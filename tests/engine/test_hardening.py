"""Hardening: code handlers can be switched off; keys never reach the store or an export."""

from __future__ import annotations

import shutil

import pytest

from flowdebug.engine.execution.handler_io import ToolContext
from flowdebug.engine.execution.handlers import CodeHandler, ToolEntry
from flowdebug.engine.sandboxing import sandbox
from flowdebug.engine.sandboxing.sandbox import (
    code_handlers_enabled,
    disable_code_handlers,
    run_code,
)
from flowdebug.engine.session.debugger import Session
from flowdebug.exchange.exports import FORMATS, export
from flowdebug.exchange.snippets import sdks
from flowdebug.model import Message, Text, Tool
from flowdebug.redact import (
    REDACTED,
    is_secret_name,
    redact_names,
    register_secret,
    secret_values,
)
from flowdebug.store.sessions import open_store

KEY = "sk-proj-FAKEKEY0123456789abcdefghijklmnopqrstuv"
TYPED = "AIzaFAKE-typed-in-the-sidebar-0123456789"
ECHO = "def handler(args):\n    return {'echo': args}\n"


@pytest.fixture
def no_switch():
    yield
    disable_code_handlers(False)


# -- code handlers off --------------------------------------------------------------------------


def test_code_handlers_run_unless_disabled(monkeypatch, no_switch):
    monkeypatch.delenv(sandbox.DISABLE_ENV, raising=False)
    assert code_handlers_enabled()
    outcome = CodeHandler(source=ECHO).run({"a": 1}, ToolContext())
    assert (outcome.is_error, outcome.value) == (False, {"echo": {"a": 1}})


@pytest.mark.parametrize("how", ["env", "call"])
def test_a_disabled_code_handler_yields_a_clear_error_result(how, monkeypatch, no_switch):
    monkeypatch.delenv(sandbox.DISABLE_ENV, raising=False)
    if how == "env":
        monkeypatch.setenv(sandbox.DISABLE_ENV, "1")
    else:
        disable_code_handlers()
    assert not code_handlers_enabled()
    outcome = CodeHandler(source=ECHO).run({"a": 1}, ToolContext())
    assert outcome.is_error and outcome.error_type == "disabled"
    assert "code handlers are disabled" in outcome.content
    assert run_code(ECHO, {}, timeout=5).status == "error"  # nothing is started


def test_the_environment_keeps_code_handlers_off_whatever_the_app_says(monkeypatch, no_switch):
    monkeypatch.setenv(sandbox.DISABLE_ENV, "true")
    disable_code_handlers(False)
    assert not code_handlers_enabled()


def test_a_session_with_a_code_tool_steps_on_with_the_error_as_its_result(monkeypatch, no_switch):
    monkeypatch.setenv(sandbox.DISABLE_ENV, "1")
    session = Session.from_scenario("weather")
    entry = ToolEntry(tool=Tool(name="get_weather"), handler=CodeHandler(source=ECHO))
    session.set_toolset(session.state.toolset.with_entry(entry))
    while session.state.next_phase != "continuation":
        session.step()
    results = session.state.conversation.messages[-1].tool_results
    assert [r.error_type for r in results] == ["disabled", "disabled"]


# -- keys ------------------------------------------------------------------------------------------


def test_credential_names_are_recognised_but_counters_are_not():
    for name in ("api_key", "apiKey", "x-api-key", "Authorization", "accessToken", "secret"):
        assert is_secret_name(name), name
    for name in ("max_tokens", "maxTokens", "input_tokens", "keyword", "tool_choice", "monkey"):
        assert not is_secret_name(name), name
    data = {"headers": {"x-goog-api-key": "abc"}, "arguments": {"token": "t"}, "n": {"key": 3}}
    assert redact_names(data) == {
        "headers": {"x-goog-api-key": REDACTED},
        "arguments": {"token": "t"},
        "n": {"key": 3},
    }


def test_a_secret_set_changed_or_removed_in_the_environment_is_known_at_the_next_ask(
    monkeypatch,
):
    """The environment's secrets are read again only when the environment changed: a key set
    after the first save, changed or removed, is what the next save redacts."""
    first, second = "sk-first-value-0123456789", "sk-second-value-0123456789"
    monkeypatch.delenv("FLOWDEBUG_TEST_API_KEY", raising=False)
    assert first not in secret_values()
    monkeypatch.setenv("FLOWDEBUG_TEST_API_KEY", first)
    assert first in secret_values()
    monkeypatch.setenv("FLOWDEBUG_TEST_API_KEY", second)
    assert second in secret_values() and first not in secret_values()
    monkeypatch.delenv("FLOWDEBUG_TEST_API_KEY")
    assert second not in secret_values()


def test_keys_never_reach_the_database_or_any_export(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    register_secret(TYPED)
    session = Session.from_scenario("weather")
    session.run()
    live = {"protocol": "gemini", "model": "gemini-2.5-flash", "api_key": TYPED}
    state = session.state.model_copy(
        update={
            "tool_state": {"live": live},
            "exchanges": [
                {
                    "step": 2,
                    "settings": live,
                    "request_headers": {"authorization": f"Bearer {KEY}"},
                    "url": f"https://example.invalid/v1?key={TYPED}",
                }
            ],
            "conversation": session.state.conversation.model_copy(
                update={
                    "system": f"Use {KEY} when asked.",
                    "messages": [
                        *session.state.conversation.messages,
                        Message(role="user", parts=[Text(text=f"{TYPED} is my key")]),
                    ],
                }
            ),
        }
    )
    db = tmp_path / "sessions.db"
    with open_store(str(db)) as store:
        store.save(state)
        assert store.load(state.id).tool_state["live"]["api_key"] == REDACTED
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("sessions.db*"))
    assert KEY.encode() not in stored and TYPED.encode() not in stored

    formats = [f for f in FORMATS if f != "svg" or shutil.which("dot")]
    for fmt in formats:
        for protocol in sdks() if fmt == "snippet" else ("anthropic", "gemini", "mcp"):
            if fmt == "trace" and protocol != "anthropic":
                continue
            data = export(state, fmt, protocol).data
            text = data.decode() if isinstance(data, bytes) else data
            assert KEY not in text and TYPED not in text, (fmt, protocol)
            if fmt in ("trace", "request", "snippet") and protocol != "mcp":  # MCP has no prompt
                assert REDACTED in text, (fmt, protocol)
