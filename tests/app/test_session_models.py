"""AppTest: a model per vendor for the session (issue 30 item 5), set in the sidebar, kept with
the session, and used by the encodings, with the warning naming which model replaced which."""

from __future__ import annotations

import json

from flowdebug.store.sessions import open_store
from tests.app.markdown import shown
from tests.app.opening import page
from tests.app.test_encodings_paste import REQUEST


def test_the_sessions_model_for_a_vendor_replaces_another_vendors_model_in_its_encoding():
    app = page("encodings.py")
    app.text_input(key="model_for_anthropic").input("claude-opus-4-1").run()
    app.radio(key="enc_source").set_value("paste").run()
    app.text_area(key="enc_paste").input(json.dumps(REQUEST)).run()
    assert not app.exception
    bodies = [json.loads(c.value) for c in app.code]
    models = [b.get("model") for b in bodies if isinstance(b, dict)]
    assert models[:3] == ["claude-opus-4-1", "gpt-4o", "gpt-4o"]
    notes = [n for n in (shown(c.value) for c in app.caption) if "gpt-4o names" in n]
    assert notes[0] == (
        "⚠ model: gpt-4o names a model of OpenAI Chat, not of Anthropic: claude-opus-4-1 "
        "(the session's choice for it) replaced it"
    )
    assert any("gemini-2.5-flash (its default) replaced it" in n for n in notes)


def test_the_model_per_vendor_is_kept_with_the_session_and_shown_again_on_reopening():
    app = page("encodings.py")
    app.text_input(key="model_for_gemini").input("gemini-2.5-pro").run()
    sid = app.session_state.fd_session.state.id
    assert open_store().load(sid).models == {"gemini": "gemini-2.5-pro"}
    again = page("debugger.py", session=sid)
    assert again.text_input(key="model_for_gemini").value == "gemini-2.5-pro"
    assert again.text_input(key="model_for_anthropic").value == ""
