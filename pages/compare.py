"""Compare: the same history sent to several models at once, and A/B tests of a tool's
description — which tool each picks, with which arguments, and whether they validate."""

import streamlit as st

from flowdebug.emulator.server import Emulator
from flowdebug.engine.player_choice import PlayerChoice, make_player
from flowdebug.engine.trace import plural
from flowdebug.errors import FlowdebugError
from flowdebug.players.keyword import KeywordPlayer, KeywordRule
from flowdebug.players.live.settings import LIVE_PROTOCOLS
from flowdebug.views.compare import ToolVariant, ab_test, compare, example_arguments
from flowdebug.views.debugger import current_turn
from pages import common, lifetime

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
    for key in ("fd_compare", "fd_ab"):
        st.session_state.pop(key, None)
    st.session_state.fd_compare_for = asked
st.markdown(
    f"**Request:** {plural(len(request.messages), 'message')}, "
    f"{plural(len(request.tools), 'tool')} "
    f"({common.literal(', '.join(t.name for t in request.tools) or 'none')})"
)


def _emulator(kind: str, keyword: str = "", tool: str = "") -> tuple[Emulator, str]:
    """The process's one offline emulator (lifetime.shared_emulator) and the token of the
    player it answers with here: the session's scenario, or the keyword rule of the A/B test.
    Players are small and stateless: one mounted per distinct scenario or rule."""
    emulator = lifetime.shared_emulator()
    if kind == "keyword":
        args = example_arguments(s.state.scenario, s.conversation, tool)
        rule = KeywordRule(tool=tool, word=keyword, arguments=args)
        return emulator, emulator.mount(KeywordPlayer([rule]), f"keyword {rule.model_dump_json()}")
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
tool = st.selectbox("Tool", names, key="ab_tool")
picked = request.tool(tool)
current = (picked.description if picked is not None else None) or ""
n_variants = int(st.number_input("Variants", 2, 5, 2, key="ab_count"))
variants = []
for i in range(n_variants):
    text = st.text_area(
        f"Variant {chr(65 + i)} description",
        value=current if i == 0 else "Look something up.",
        key=f"ab_desc_{i}",
        height=80,
    )
    variants.append(ToolVariant(label=chr(65 + i), description=text))
runs = int(st.number_input("Runs per variant (K)", 1, 50, 5, key="ab_runs"))
which = st.selectbox(
    "Player",
    range(len(choices)),
    key="ab_player",
    format_func=lambda i: (
        f"{choices[i].protocol} @ offline emulator" if offline else choices[i].label()
    ),
)
keyword = ""
if offline:
    keyword = st.text_input(
        "Offline emulator: the model calls the tool only when its description matches "
        "(words compared stemmed, as the offline model scores them)",
        value="weather",
        key="ab_keyword",
    )
if st.button("Run the A/B test", key="ab_run", type="primary"):
    try:
        emu = _emulator("keyword", keyword, tool) if offline else None
        player = _players(emu)[which]
        with st.spinner(f"{runs} runs × {n_variants} variants…"):
            result = ab_test(request, tool, variants, lambda: player, runs=runs)
        st.session_state.fd_ab = result.table()
    except FlowdebugError as e:
        st.error(common.literal(e))
if st.session_state.get("fd_ab"):
    st.dataframe(st.session_state.fd_ab, width="stretch", hide_index=True)
