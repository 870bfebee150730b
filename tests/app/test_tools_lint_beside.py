"""AppTest: the linter's findings beside the description and schema fields of the Tools page's
editor, as the person types, before any save (issue 30 item 10)."""

from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from tests.app.markdown import shown

PAGE = Path(__file__).resolve().parents[2] / "pages" / "tools.py"
TAGS_SCHEMA = {
    "type": "object",
    "properties": {
        "location": {"type": "string", "description": "City name"},
        "tags": {"type": "array", "description": "Labels to filter by"},
    },
    "required": ["location", "when"],
}


def captions(app: AppTest) -> list[str]:
    return [shown(c.value) for c in app.caption]


def test_findings_show_beside_the_fields_as_typed_and_none_is_saved():
    app = AppTest.from_file(str(PAGE), default_timeout=60)
    app.run()
    assert not app.exception
    saved = app.session_state.fd_session.state.toolset.model_dump()
    app.text_area(key="tool_description").input("Weather.").run()
    assert any(
        c.startswith("⚠️ the description of 'get_weather'") and "say what it does" in c
        for c in captions(app)
    )
    app.text_area(key="tool_parameters").input(json.dumps(TAGS_SCHEMA)).run()
    assert not app.exception
    texts = captions(app)
    unknown = [c for c in texts if "'required' names 'when'" in c]
    assert unknown == [
        "⛔ 'required' names 'when', which is not among the properties: the model is told to "
        "send an argument it has no schema for · `tools[0].parameters.required`"
    ]
    arrays = [c for c in texts if "array schema missing items" in c]
    assert [c.split(":")[0] for c in arrays] == ["⛔ openai-chat", "⛔ openai-responses"]
    assert arrays[0] == (
        "⛔ openai-chat: an array needs 'items' (the schema of its elements) — \"Invalid schema "
        "for function 'get_weather': In context=('properties', 'tags'), array schema missing "
        'items." · `tools[0].parameters.properties.tags`'
    )
    # Typed only: nothing was saved.
    assert app.session_state.fd_session.state.toolset.model_dump() == saved


def test_a_schema_that_is_not_json_is_said_beside_the_schema_field():
    app = AppTest.from_file(str(PAGE), default_timeout=60)
    app.run()
    app.text_area(key="tool_parameters").input('{"type": "object",').run()
    assert not app.exception
    assert (
        "⛔ not valid JSON: Expecting property name enclosed in double quotes at line 1 column 19"
        in captions(app)
    )
