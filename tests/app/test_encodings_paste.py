"""AppTest: the Encodings page takes a pasted payload (issue 30 item 10) and shows it in every
chosen protocol; a payload no protocol reads is refused with its reason."""

from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from tests.app.markdown import shown

PAGE = Path(__file__).resolve().parents[2] / "pages" / "encodings.py"
REQUEST = {
    "model": "gpt-4o",
    "messages": [{"role": "user", "content": "Find flights from Paris to Tokyo"}],
    "tools": [
        {
            "type": "function",
            "function": {
                "name": "search_flights",
                "description": "Search flights between two cities",
                "parameters": {
                    "type": "object",
                    "properties": {"origin": {"type": "string"}},
                    "required": ["origin"],
                },
            },
        }
    ],
}


def test_a_pasted_request_is_shown_in_every_chosen_encoding():
    app = AppTest.from_file(str(PAGE), default_timeout=60)
    app.run()
    app.radio(key="enc_source").set_value("paste").run()
    assert shown(app.info[0].value) == "Paste a payload to see it in every encoding."
    app.text_area(key="enc_paste").input(json.dumps(REQUEST)).run()
    assert not app.exception
    assert [t.label for t in app.tabs] == ["request 1"]
    bodies = [json.loads(c.value) for c in app.code]
    assert len(bodies) == len(app.session_state.protocols)
    assert all("search_flights" in json.dumps(b) for b in bodies)
    models = [b.get("model") for b in bodies if isinstance(b, dict)]
    assert models[:3] == ["claude-sonnet-4-6", "gpt-4o", "gpt-4o"]  # Anthropic: its own
    notes = [n for n in (shown(c.value) for c in app.caption) if "gpt-4o names" in n]
    assert notes[0] == (
        "⚠ model: gpt-4o names a model of OpenAI Chat, not of Anthropic: claude-sonnet-4-6 "
        "(its default) replaced it"
    )
    assert len(notes) == 3  # Anthropic, Gemini, Bedrock


def test_a_payload_no_protocol_reads_is_refused_with_its_reason():
    app = AppTest.from_file(str(PAGE), default_timeout=60)
    app.run()
    app.radio(key="enc_source").set_value("paste").run()
    app.text_area(key="enc_paste").input('{"hello": 1}').run()
    assert not app.exception
    assert shown(app.error[0].value).startswith("Not read: ")
    assert "found: hello" in shown(app.error[0].value)
    assert not app.code
