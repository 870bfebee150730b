"""Compare: the same history sent to several models at once, and A/B tests of a tool's
description — which tool each picks, with which arguments, and whether they validate."""

import streamlit as st

from flowdebug.emulator.server import Emulator
from flowdebug.engine.session.player_choice import PlayerChoice, make_player
from flowdebug.engine.tracing.trace import plural
from flowdebug.errors import FlowdebugError
from flowdebug.players.live.settings import LIVE_PROTOCOLS
from flowdebug.players.reading import ReadingPlayer
from flowdebug.views.compare import ToolVariant, ab_test, compare, last_user_text
from flowdebug.views.debugger import current_turn
from flowdebug.views.phrasings import phrasings
from ui import common, lifetime

common.sidebar()
s = common.session()
st.title("Compare models")
st.caption(
    "Send the current request to several models at once, or run one turn K times per "
    "variant of a tool's description. Live models need a key (sidebar: *Who plays the "
    "model*) or a base URL; the offline emulator speaks every vendor's API on this machine."
)
request = current_turn(s.conversation).request


# Results shown belong to the request they answered: another session or step clears them.
asked = (s.state.id, s.state.step, len(request.messages))
if st.session_state.get("fd_compare_for") != asked:
    for key in ("fd_compare", "fd_ab", "fd_ab_runs"):
        st.session_state.pop(key, None)
    st.session_state.fd_compare_for = asked
st.markdown(
    f"**Request:** {plural(len(request.messages), 'message')}, "
    f"{plural(len(request.tools), 'tool')} "
    f"({common.literal(', '.join(t.name for t in request.tools) or 'none')})"
)


def _emulator(kind: str) -> tuple[Emulator, str]:
    """The process's one offline emulator (lifetime.shared_emulator) and the token of the
    player it answers with here: the session's scenario, or (``reading``, the A/B test) the
    offline model that reads the request. Players are small and stateless: one mounted per
    distinct scenario."""
    emulator = lifetime.shared_emulator()
    if kind == "reading":
        return emulator, emulator.mount(ReadingPlayer(), "reading")
    scenario = s.state.scenario or "weather"
    player = make_player(PlayerChoice(kind="scripted"), scenario)
    return emulator, emulator.mount(player, f"scenario {scenario}")


# -- players -----------------------------------------------------------------------------------
st.subheader("Players")
count = int(st.number_input("How many players", 1, 6, 2, key="cmp_count"))
offline = st.toggle(
    "Answer from the offline emulator (no key, no network)", value=True, key="cmp_offline"
)
choices = []
defaults = list(LIVE_PROTOCOLS)
for i in range(count):
    c = st.columns([2, 2, 3])
    protocol = c[0].selectbox(
        "API",
        LIVE_PROTOCOLS,
        index=i % len(defaults),
        key=f"cmp_protocol_{i}",
        format_func=common.title,
    )
    model = c[1].text_input("Model", key=f"cmp_model_{i}", placeholder="vendor default")
    base_url = c[2].text_input(
        "Base URL",
        key=f"cmp_url_{i}",
        disabled=offline,
        placeholder="vendor API, or a local server",
    )
    choices.append(
        PlayerChoice(
            kind="live",
            protocol=protocol,
            model=model or None,
            base_url=base_url or None,
            api_key=st.session_state.get("live_key") or None,
        )
    )


def _players(offline_player: tuple[Emulator, str] | None):
    players = []
    for ch in choices:
        if offline_player is not None:
            emulator, mount = offline_player
            ch = PlayerChoice(
                kind="live",
                protocol=ch.protocol,
                model=ch.model,
                base_url=emulator.base_url(ch.protocol, mount),
            )
        players.append(make_player(ch, s.state.scenario))
    return players


if st.button("Compare", key="cmp_run", type="primary"):
    try:
        emu = _emulator("scenario") if offline else None
        with st.spinner("Asking every model…"):
            st.session_state.fd_compare = [r.summary() for r in compare(request, _players(emu))]
    except FlowdebugError as e:
        st.error(common.literal(e))
if st.session_state.get("fd_compare"):
    rows = st.session_state.fd_compare
    st.dataframe(rows, width="stretch", hide_index=True)
    # A table cell cuts a long message short: each failure is also written out whole.
    for row in rows:
        if row["error"]:
            st.error(f"**{common.literal(row['player'])}** failed: {common.literal(row['error'])}")

# -- A/B -----------------------------------------------------------------------------------------
st.subheader("A/B test a tool description")
names = [t.name for t in request.tools]
if not names:
    st.info("This session declares no tools.")
    st.stop()


def _prefill() -> None:
    """Variant A starts as the chosen tool's description as declared."""
    chosen_tool = request.tool(st.session_state.ab_tool)
    st.session_state.ab_desc_0 = (chosen_tool.description if chosen_tool else None) or ""


if st.session_state.get("ab_tool") not in names:
    st.session_state.ab_tool = names[0]
    _prefill()
tool = st.selectbox("Tool", names, key="ab_tool", on_change=_prefill)
n_variants = int(st.number_input("Variants", 2, 5, 2, key="ab_count"))
variants = []
for i in range(n_variants):
    st.session_state.setdefault(f"ab_desc_{i}", "" if i == 0 else "Look something up.")
    text = st.text_area(f"Variant {chr(65 + i)} description", key=f"ab_desc_{i}", height=80)
    variants.append(ToolVariant(label=chr(65 + i), description=text))
runs = int(st.number_input("Runs per variant (K)", 1, 50, 5, key="ab_runs"))
which = st.selectbox(
    "Player",
    range(len(choices)),
    key="ab_player",
    format_func=lambda i: (
        f"{choices[i].protocol} @ offline model" if offline else choices[i].label()
    ),
)
asked = phrasings(last_user_text(request), runs) if offline else []
if offline:
    st.caption(
        "Offline, the model that reads the request answers (through the chosen API's "
        f"emulator): run n of every variant asks with phrasing n of the request, "
        f"{plural(len(set(asked)), 'phrasing')} in all (synonyms of its words, framings)."
    )
if st.button("Run the A/B test", key="ab_run", type="primary"):
    try:
        emu = _emulator("reading") if offline else None
        player = _players(emu)[which]
        with st.spinner(f"{runs} runs × {n_variants} variants…"):
            result = ab_test(request, tool, variants, lambda: player, runs=runs, phrasings=asked)
        st.session_state.fd_ab = result.table()
        st.session_state.fd_ab_runs = result.runs()
    except FlowdebugError as e:
        st.error(common.literal(e))
if st.session_state.get("fd_ab"):
    st.markdown("**Runs per variant** that called each tool, or answered with text")
    st.dataframe(st.session_state.fd_ab, width="stretch", hide_index=True)
    with st.expander("Every run"):
        st.dataframe(  # a grid shows its cells as text: no Markdown escapes
            st.session_state.get("fd_ab_runs", []), width="stretch", hide_index=True
        )
