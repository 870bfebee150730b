"""The sidebar's player: who plays the model (scripted, offline, manual, live) and the model
each vendor names, kept with the session (never the key).

A helper of the pages, not a page; :func:`ui.common.draw_sidebar` draws it.
"""

from __future__ import annotations

from contextlib import suppress

import streamlit as st

from flowdebug import protocols
from flowdebug.engine.session.debugger import Session
from flowdebug.engine.session.player_choice import (
    KINDS,
    LABELS,
    PlayerChoice,
    default_kind,
    make_player,
)
from flowdebug.engine.session.session_state import PlayerSettings
from flowdebug.errors import FlowdebugError
from flowdebug.players.live.settings import LIVE_PROTOCOLS
from flowdebug.redact import register_secret, url_secrets
from flowdebug.views import vendors
from ui import flash
from ui.opened import session
from ui.text import literal


def player_choice() -> PlayerChoice:
    """What the sidebar's 'Who plays the model' says (the key stays in this session)."""
    get = st.session_state.get
    return PlayerChoice(
        kind=get("player_kind", "scripted"),
        protocol=get("live_protocol") or protocols.default_protocol(local=True),
        model=get("live_model") or None,
        base_url=get("live_base_url") or None,
        stream=bool(get("live_stream", False)),
        api_key=get("live_key") or None,
    )


def _apply_player() -> None:
    choice = player_choice()
    # Never saved, exported or logged, even by accident: the key and a URL's own credentials.
    for secret in [choice.api_key or "", *url_secrets(choice.base_url or "")]:
        register_secret(secret)
    s = session()
    try:
        s.player = make_player(choice, s.state.scenario, s.state.models)
    except FlowdebugError as e:
        flash.error(str(e))
        return
    st.session_state.fd_player_choice = choice
    s.set_settings(player=choice.settings())  # kept with the session, never the key


PLAYER_KEYS = {  # the sidebar's player widgets and the kept setting each one shows
    "player_kind": "kind",
    "live_protocol": "protocol",
    "live_model": "model",
    "live_base_url": "base_url",
    "live_stream": "stream",
}


MODEL_KEY = "model_for_"  # + a protocol name: the sidebar's model for that vendor


def _keep_models() -> None:
    """The sidebar's model per vendor, kept with the session; a live player without a model
    of its own takes its vendor's."""
    s = session()
    typed = {n: st.session_state.get(MODEL_KEY + n) or "" for n in protocols.model_protocols()}
    s.set_settings(models=typed)
    choice = st.session_state.get("fd_player_choice")
    if choice is not None and choice.kind == "live":
        with suppress(FlowdebugError):
            s.player = make_player(choice, s.state.scenario, s.state.models)


def models_panel() -> None:
    with st.expander("Model per vendor (this session)", expanded=False):
        for name in protocols.model_protocols():
            facts = protocols.facts(name)
            st.text_input(
                facts.short,
                key=MODEL_KEY + name,
                placeholder=facts.default_model,
                on_change=_keep_models,
            )
        st.caption(
            "Empty: the vendor's default. Used by the encodings, the snippets and a live "
            "player without a model of its own; a source naming another vendor's model gets "
            "this one, and a warning says which replaced which."
        )


def show_kept(s: Session) -> None:
    """Once per session opened: the sidebar's player settings say the player the session kept
    (a reopened live session gets the key typed in this browser session, if any)."""
    if st.session_state.get("fd_player_for") == s.state.id:
        return
    st.session_state.fd_player_for = s.state.id
    kept = s.state.player or PlayerSettings(kind=default_kind(s.state.scenario))
    for key, name in PLAYER_KEYS.items():
        value = getattr(kept, name)
        if key == "live_protocol":
            value = value or protocols.default_protocol(local=True)
        st.session_state[key] = value if value is not None else ""
    for name in protocols.model_protocols():
        st.session_state[MODEL_KEY + name] = s.state.models.get(name, "")
    choice = PlayerChoice.of(kept, st.session_state.get("live_key") or None)
    if kept.kind == default_kind(s.state.scenario):
        # The session's default (a scenario's script, the offline model for one of your
        # own) is nobody's choice: a scenario opened next plays its own script.
        st.session_state.pop("fd_player_choice", None)
    else:
        st.session_state.fd_player_choice = choice
    if kept.kind == "live" and choice.api_key:
        with suppress(FlowdebugError):  # the kept player stays (its key from the environment)
            s.player = make_player(choice, s.state.scenario, s.state.models)


def player_panel() -> None:
    """The sidebar's "Who plays the model": the player's kind and, for a live one, its API,
    model, base URL, key and streaming; applied by its button."""
    with st.expander("Who plays the model", expanded=False):
        kind = st.radio(
            "Player",
            KINDS,
            key="player_kind",
            horizontal=True,
            format_func=LABELS.__getitem__,
        )
        if kind == "live":
            st.selectbox("API", LIVE_PROTOCOLS, key="live_protocol", format_func=_title)
            st.text_input("Model (empty: the vendor's default)", key="live_model")
            st.text_input(
                f"Base URL (a local or {vendors.local_compatible()}-compatible server)",
                key="live_base_url",
                placeholder="http://localhost:11434/v1",
            )
            st.text_input(
                "API key (kept in this browser session only)",
                key="live_key",
                type="password",
                help=protocols.facts(st.session_state.live_protocol).key_help,
            )
            st.checkbox("Stream", key="live_stream")
        st.button("Use this player", key="apply_player", on_click=_apply_player)
        st.caption(f"Now: {literal(getattr(session().player, 'name', '?'))}")


def _title(name: str) -> str:
    return protocols.get(name).title
