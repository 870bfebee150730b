"""One tool-calling cycle in every chosen wire encoding, side by side."""

import json
from pathlib import Path

import streamlit as st

from flowdebug.model import Conversation
from flowdebug.views.encodings import encode_all, turns
from pages import common

SAMPLE = Path(__file__).resolve().parent.parent / "sample_tools" / "weather_conversation.json"

common.sidebar()


@st.cache_data
def _sample() -> Conversation:
    return Conversation.model_validate_json(SAMPLE.read_text())


@st.cache_data
def _payloads(conv_json: str, names: tuple[str, ...]) -> dict:
    return encode_all(Conversation.model_validate_json(conv_json), list(names))


conv = _sample()
st.title("One cycle, every encoding")
st.caption(
    "The weather scenario: one `get_weather` tool, two parallel calls (Paris, Tokyo), the "
    "Tokyo call times out, the model answers. Each column is what that protocol puts on the "
    "wire for the same step. Choose the protocols in the sidebar."
)
chosen = tuple(common.chosen_protocols())
payloads = _payloads(conv.model_dump_json(), chosen)
labels = [p.label for p in payloads[chosen[0]]]
st.markdown(
    f"**{len(conv.tools)} tool · {len(conv.messages)} messages · {len(turns(conv))} model "
    "turns** — declaration → request → execution → continuation"
)
per_row = 1 if common.presenter() else min(3, len(chosen))
for tab, label in zip(st.tabs(labels), labels, strict=True):
    with tab:
        for start in range(0, len(chosen), per_row):
            row = chosen[start : start + per_row]
            for col, name in zip(st.columns(per_row), row, strict=False):
                item = next(p for p in payloads[name] if p.label == label)
                col.markdown(f"##### {common.title(name)}")
                col.code(
                    json.dumps(item.value, indent=2, ensure_ascii=False),
                    language="json",
                    wrap_lines=True,
                )
                for w in item.warnings:
                    col.caption(f"⚠ {common.literal(w.path)}: {common.literal(w.message)}")
