"""flowdebug — the Streamlit app. Run with the README's command; pages live in pages/."""

import streamlit as st

st.set_page_config(page_title="flowdebug", page_icon="🔁", layout="wide")

pages = [
    st.Page("pages/debugger.py", title="Debugger", icon="🪲", default=True),
    st.Page("pages/tools.py", title="Tools", icon="🧰"),
    st.Page("pages/history.py", title="History", icon="📜"),
    st.Page("pages/protocols.py", title="Protocols", icon="🧾"),
    st.Page("pages/failures.py", title="Failures", icon="💥"),
    st.Page("pages/compare.py", title="Compare", icon="⚖️"),
    st.Page("pages/sessions.py", title="Sessions", icon="💾"),
    st.Page("pages/encodings.py", title="Encodings", icon="🔀"),
]
page = st.navigation(pages)
st.session_state.fd_page = page.url_path  # the sidebar restores its settings on a page change
page.run()
