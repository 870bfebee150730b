"""The floor of the room benchmark: the least a Streamlit page can do per click.

One Step button (key ``step``, like the Debugger's, so the same simulated attendee presses it)
and five small graphviz charts that change with every press, as issue 18 describes.
``bench/workshop_load.py`` serves it the same way as the app, from the same checkout.
"""

import streamlit as st

st.session_state.setdefault("steps", 0)
if st.button("Step", key="step"):
    st.session_state.steps += 1
n = st.session_state.steps
st.write(f"step {n}")
for vendor in ("anthropic", "openai-chat", "openai-responses", "gemini", "mcp"):
    arrows = "\n".join(f'  u -> m [label="{vendor} {i}"];' for i in range(n % 5 + 1))
    st.graphviz_chart(f'digraph {{\n  u [label="User"]; m [label="Model"];\n{arrows}\n}}')
