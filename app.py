"""flowdebug — the Streamlit app. Run with the README's command; pages live in pages/."""

import streamlit as st

st.set_page_config(page_title="flowdebug", page_icon="🔁", layout="wide")

pages = [
    st.Page("pages/encodings.py", title="Encodings", icon="🧾", default=True),
]
st.navigation(pages).run()
