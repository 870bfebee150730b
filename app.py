"""flowdebug — the Streamlit app. Run with the README's command; pages live in pages/.

The sidebar every page shares is drawn here, once, around whichever page runs (Streamlit's
st.navigation pattern): its widgets stay mounted across page changes, so they keep their
values with no copies kept aside.
"""

import streamlit as st

from ui import common, lifetime

st.set_page_config(page_title="flowdebug", page_icon="🔁", layout="wide")
if st.session_state.pop(common.COLLAPSE, False):  # presenter mode just turned on
    st.set_page_config(initial_sidebar_state="collapsed")

pages = [
    st.Page("pages/debugger.py", title="Debugger", icon="🪲", default=True),
    st.Page("pages/tools.py", title="Tools", icon="🧰"),
    st.Page("pages/history.py", title="History", icon="📜"),
    st.Page("pages/protocols.py", title="Protocols", icon="🧾"),
    st.Page("pages/failures.py", title="Failures", icon="💥"),
    st.Page("pages/compare.py", title="Compare", icon="⚖️"),
    st.Page("pages/sessions.py", title="Sessions", icon="💾"),
    st.Page("pages/encodings.py", title="Encodings", icon="🔀"),
    st.Page("pages/room.py", title="Room", icon="👥", url_path="room"),
]
page = st.navigation(pages)
lifetime.start_reaper()
common.draw_sidebar()
page.run()
lifetime.freeze_startup()  # once per process, after the first page has imported what it uses
