"""AppTest: the Sessions page imports an OpenTelemetry GenAI trace (OTLP JSON) as a session."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from flowdebug.store.sessions import open_store
from tests.paths import FIXTURES

PAGES = Path(__file__).resolve().parents[2] / "pages"


def test_sessions_page_imports_an_otel_trace_and_opens_it():
    app = AppTest.from_file(str(PAGES / "sessions.py"), default_timeout=60)
    app.run()
    before = [i.id for i in open_store().list()]
    text = (FIXTURES / "otel" / "agentscope.json").read_text()
    app.text_area(key="imp_text").set_value(text).run()
    app.button(key="imp_go").click().run()
    assert not app.exception and not app.error
    s = app.session_state.fd_session
    assert s.state.id not in before and s.state.id in [i.id for i in open_store().list()]
    calls = [c.id for m in s.conversation.messages for c in m.tool_calls]
    assert calls == ["call_cd1858cf64ad402f8f64e6", "call_7f25ce38ce304f4eb20a0a"]
    assert [e.call_id for e in s.state.events if e.kind == "tool_call"] == calls
