"""An imported trace keeps its author's model per vendor but not their player (issue 30 item 4:
the player persists with the session, the importer's own session)."""

from __future__ import annotations

from flowdebug.engine.session.debugger import Session


def test_an_imported_trace_does_not_bring_its_authors_player(tmp_path):
    from flowdebug.engine.session.session_state import PlayerSettings
    from flowdebug.exchange.exports import export
    from flowdebug.exchange.imports import import_session

    session = Session.from_scenario("weather")
    session.state.player = PlayerSettings(
        kind="live", protocol="openai-chat", base_url="https://elsewhere.example.org/v1"
    )
    session.state.models = {"anthropic": "claude-opus-4-1"}
    imported = import_session(export(session.state, "trace").data)
    assert imported.state.player is None  # the importer's default player plays it
    assert imported.state.models == {"anthropic": "claude-opus-4-1"}
