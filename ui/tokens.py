"""Tokens on the pages: what declaring the tools costs in each vendor (the Tools page) and
the usage each vendor reported for each model turn (the History page). The figures come from
:mod:`flowdebug.views.tokens`; a count by the vendors' endpoints is asked for with a button
(two calls per vendor) and kept for the tools it was made for."""

from __future__ import annotations

import hashlib
import json

import streamlit as st

from flowdebug.engine.session.session_state import SessionState
from flowdebug.model import Tool
from flowdebug.protocols.token_estimate import METHOD
from flowdebug.views.tokens import countable, footprints, usage_rows
from ui import common

COUNTS = "fd_token_counts"


def _fingerprint(tools: list[Tool]) -> str:
    text = json.dumps([t.model_dump(mode="json") for t in tools], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _count(tools: list[Tool]) -> None:
    rows = [f.row() for f in footprints(tools, choice=common.player_choice())]
    st.session_state[COUNTS] = {"tools": _fingerprint(tools), "rows": rows}


def footprint_table(tools: list[Tool]) -> None:
    """The footprint table: one row per vendor, counted or estimated (and why)."""
    st.header("Token footprint of the declarations")
    st.caption(
        "What declaring these tools adds to every request, in each vendor. **Counted**: the "
        "vendor's count-tokens endpoint, the smallest request with the tools less the same "
        f"request without them (its tool-use prompt included). **≈ estimated**: {METHOD}, "
        "about four characters a token; JSON usually counts somewhat higher."
    )
    saved = st.session_state.get(COUNTS)
    if saved and saved["tools"] == _fingerprint(tools):
        rows = saved["rows"]
    else:
        rows = [f.row() for f in footprints(tools, choice=common.player_choice(), count=False)]
    st.table(common.literal_rows(rows), hide_index=True)
    reachable = countable(common.player_choice())
    if reachable:
        names = ", ".join(common.title(n) for n in reachable)
        st.button(
            f"Count with the vendors' endpoints ({names})",
            key="tokens_count",
            on_click=_count,
            args=(tools,),
        )
    else:
        st.caption(
            "A count by the vendor needs its key (in the server's environment, or the live "
            "player's) or a live player pointed at a local server or the emulator."
        )


def usage_table(state: SessionState) -> None:
    """The usage each vendor reported, one row per model turn it answered, and the total."""
    st.subheader("Tokens each vendor reported")
    rows = usage_rows(state)
    if not rows:
        st.write(
            "No vendor answered a turn of this session yet: the scripted and offline models "
            "report no usage. A live model's turns, a recording's and an imported response's "
            "show the counts the vendor sent."
        )
        return
    columns = [k for k in dict.fromkeys(k for r in rows for k in r) if k != "from"] + ["from"]
    shown = [{k: "—" if r.get(k) is None else r[k] for k in columns} for r in rows]
    st.table(common.literal_rows(shown), hide_index=True)
