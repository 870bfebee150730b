"""One tool-calling cycle in every chosen wire encoding, side by side."""

import json
from pathlib import Path

import streamlit as st

from flowdebug.errors import FlowdebugError
from flowdebug.model import Conversation
from flowdebug.views.encodings import encode_all, pasted, trip_rows, turns
from ui import common

SAMPLE = Path(__file__).resolve().parent.parent / "sample_tools" / "weather_conversation.json"

common.sidebar()


@st.cache_data
def _sample() -> Conversation:
    return Conversation.model_validate_json(SAMPLE.read_text())


@st.cache_data
def _trips(conv_json: str) -> list[dict]:
    return trip_rows(Conversation.model_validate_json(conv_json))


@st.cache_data
def _payloads(conv_json: str, names: tuple[str, ...], models: tuple[tuple[str, str], ...]) -> dict:
    return encode_all(Conversation.model_validate_json(conv_json), list(names), models=dict(models))


st.title("One cycle, every encoding")
SOURCES = {
    "sample": "The sample cycle",
    "session": "The open session",
    "paste": "A payload pasted here",
}
source = st.radio("Show", list(SOURCES), key="enc_source", horizontal=True, format_func=SOURCES.get)
notes: list[str] = []
if source == "paste":
    text = st.text_area(
        "A request or response of any vendor (or a trace): each turn it holds, and a request "
        "still waiting for its answer, in every chosen protocol",
        key="enc_paste",
        height=160,
    )
    if not text.strip():
        st.info("Paste a payload to see it in every encoding.")
        st.stop()
    try:
        conv, notes = pasted(text)
    except FlowdebugError as e:
        st.error(f"Not read: {common.literal(e)}")
        st.stop()
elif source == "session":
    conv = common.session().conversation
else:
    conv = _sample()
    st.caption(
        "The weather scenario: one `get_weather` tool, two parallel calls (Paris, Tokyo), the "
        "Tokyo call times out, the model answers. Each column is what that protocol puts on "
        "the wire for the same step. Choose the protocols in the sidebar."
    )
for note in notes:
    st.caption(f"⚠ {common.literal(note)}")
chosen = tuple(common.chosen_protocols())
# the session's model for each vendor (the sidebar's "Model per vendor")
models = tuple(sorted(common.session().state.models.items()))
payloads = _payloads(conv.model_dump_json(), chosen, models)
labels = [p.label for p in payloads[chosen[0]]]
if not labels:
    st.info("Nothing to encode yet: no model turn and no request.")
    st.stop()
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

st.header("Round trip: A → B → A")
st.caption(
    "What converting to another vendor and back keeps, for every ordered pair of vendors "
    "(as `flowdebug roundtrip FILE` prints it): each call's id, name and arguments, each "
    "result's pairing, content and error flag, the text, reasoning, images and model. "
    "**kept**, **lost** (fewer after the trip), **changed**, or **none** to keep; the "
    "warnings are what each conversion said."
)
trips = trip_rows(text) if source == "paste" else _trips(conv.model_dump_json())
st.dataframe(trips, hide_index=True)
