"""One tool-calling cycle in all five wire encodings, side by side."""

import json
from pathlib import Path

import streamlit as st

from flowdebug import protocols
from flowdebug.encodings import encode_all, turns
from flowdebug.model import Conversation

SAMPLE = Path(__file__).resolve().parent.parent / "sample_tools" / "weather_conversation.json"


@st.cache_data
def _sample() -> Conversation:
    return Conversation.model_validate_json(SAMPLE.read_text())


@st.cache_data
def _payloads(conv_json: str) -> dict:
    return encode_all(Conversation.model_validate_json(conv_json))


conv = _sample()
st.title("One cycle, five encodings")
st.caption(
    "The weather scenario: one `get_weather` tool, two parallel calls (Paris, Tokyo), the "
    "Tokyo call times out, the model answers. Each column is what that protocol puts on the "
    "wire for the same step."
)
payloads = _payloads(conv.model_dump_json())
labels = [p.label for p in payloads[next(iter(payloads))]]
n_turns = len(turns(conv))
st.markdown(
    f"**{len(conv.tools)} tool · {len(conv.messages)} messages · {n_turns} model turns** — "
    "declaration → request → execution → continuation"
)
for tab, label in zip(st.tabs(labels), labels, strict=True):
    with tab:
        for col, (name, items) in zip(st.columns(len(payloads)), payloads.items(), strict=True):
            item = next(p for p in items if p.label == label)
            col.markdown(f"#### {protocols.get(name).title}")
            col.code(json.dumps(item.value, indent=2, ensure_ascii=False), language="json")
            for w in item.warnings:
                col.caption(f"⚠ {w.path}: {w.message}")
