"""flowdebug served: the Streamlit app (app.py) and the room followers' poll on one server.

``make run`` runs ``streamlit run serve.py``: Streamlit finds ``app`` below and serves app.py's
pages with the route of :mod:`flowdebug.views.room_pulse` beside them, which a follower's page
polls without a script run. Streamlit's flags (``--server.port`` and the others) apply as with
``streamlit run app.py``; they are read before this file, so the route follows
``server.baseUrlPath`` as the pages do.
"""

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

from flowdebug.emulator.serving import nodelay_on_accept
from flowdebug.views import room_pulse
from ui.serving import theme_once

# Each message of a run leaves at once, not after the browser's delayed ACK (about 40 ms a
# Step): see nodelay_on_accept. Loaded before the server accepts its first connection.
nodelay_on_accept()
# Each run's new_session message copies the theme built once: see ui.serving.
theme_once()

# app.py declares the pages with st.navigation; the pages/ folder beside it is not Streamlit's
# old pages directory. Streamlit decides that once per process, at the first browser session,
# from the folder's presence, and only st.navigation's first call undoes it: a server whose first
# visitor opened a room link (/room) ran pages/room.py alone and listed the folder's file names
# in the sidebar for everyone until someone opened the app's root.
PagesManager.uses_pages_directory = False

app = st.App("app.py", routes=[room_pulse.route(base=st.get_option("server.baseUrlPath"))])
