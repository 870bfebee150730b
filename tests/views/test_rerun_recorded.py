"""Where "before" comes from when a turn is re-run (views/rerun.sent_request): the undo
history first, else the request an exchange of the session kept from the wire (a recording's),
decoded by its vendor's codec, else the history as it stands."""

from __future__ import annotations

from flowdebug import protocols
from flowdebug.engine.execution.handlers import Toolset
from flowdebug.engine.session.debugger import Session
from flowdebug.engine.session.session_state import SessionState
from flowdebug.model import Tool
from flowdebug.players import ManualPlayer
from flowdebug.players.live.settings import LIVE_PROTOCOLS
from flowdebug.views.rerun import sent_request
from tests import cases

PROTOCOL = LIVE_PROTOCOLS[1]


def _recorded() -> Session:
    """A session as flowdebug record leaves it: the last request's history and its answer,
    an exchange per request (an MCP message between them), the tools edited since."""
    codec = protocols.get(PROTOCOL)
    exchanges = [
        {"protocol": PROTOCOL, "request": codec.encode_request(cases.WEATHER_INITIAL).value},
        {"protocol": "mcp", "messages": [{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}]},
        {"protocol": PROTOCOL, "request": codec.encode_request(cases.WEATHER_CONTINUATION).value},
    ]
    recorded = codec.decode_request(exchanges[-1]["request"]).value
    edited = [
        Tool(name=t.name, description="edited", parameters=t.parameters) for t in recorded.tools
    ]
    conv = recorded.model_copy(update={"tools": edited})
    state = SessionState(conversation=conv, toolset=Toolset(), exchanges=exchanges)
    return Session(state, ManualPlayer())


def test_before_is_the_recorded_request_with_the_tools_as_the_agent_sent_them():
    session = _recorded()
    for at in (0, 2):
        sent = sent_request(session, at)
        assert sent.source == "exchange" and sent.protocol == PROTOCOL
        assert [t["description"] for t in sent.request["tools"]] == [
            t.description for t in cases.WEATHER_INITIAL.tools
        ]
        assert len(sent.request["messages"]) == at + 1
    assert sent_request(session, 0).wire == session.state.exchanges[0]["request"]


def test_a_history_edited_since_the_recording_is_before_as_it_stands():
    session = _recorded()
    messages = list(session.state.conversation.messages)
    messages[0] = cases.WEATHER_FINAL.model_copy(update={"role": "user"})
    session.state.conversation = session.state.conversation.model_copy(
        update={"messages": messages}
    )
    sent = sent_request(session, 2)
    assert sent.source == "history" and sent.wire is None
    assert [t["description"] for t in sent.request["tools"]] == ["edited"]


def test_a_long_recording_finds_an_early_turn_decoding_a_few_exchanges_not_all(monkeypatch):
    """Each decode reads a whole history: a scan from the newest decoded every exchange after
    the turn (the square of a long recording's length)."""
    from flowdebug.model import Message, Text
    from flowdebug.views import rerun

    codec = protocols.get(PROTOCOL)
    messages: list[Message] = []
    exchanges = []
    for n in range(200):  # 200 requests, each one user message and one answer longer
        messages = [*messages, Message(role="user", parts=[Text(text=f"question {n}")])]
        conv = cases.WEATHER_INITIAL.model_copy(update={"messages": messages})
        exchanges.append({"protocol": PROTOCOL, "request": codec.encode_request(conv).value})
        messages = [*messages, Message(role="assistant", parts=[Text(text=f"answer {n}")])]
    conv = cases.WEATHER_INITIAL.model_copy(update={"messages": messages})
    session = Session(
        SessionState(conversation=conv, toolset=Toolset(), exchanges=exchanges), ManualPlayer()
    )
    decodes: list[object] = []
    real = rerun._decoded
    monkeypatch.setattr(rerun, "_decoded", lambda e: decodes.append(e) or real(e))
    for at in (0, 20, 398):
        decodes.clear()
        sent = sent_request(session, at)
        assert sent.source == "exchange" and sent.wire == exchanges[at // 2]["request"]
        assert len(sent.request["messages"]) == at + 1
        assert len(decodes) <= 12, (at, len(decodes))
