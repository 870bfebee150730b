"""flowdebug served: the Streamlit app (app.py) and the room followers' poll on one server.

``make run`` runs ``streamlit run serve.py``: Streamlit finds ``app`` below and serves app.py's
pages with the route of :mod:`flowdebug.views.room_pulse` beside them, which a follower's page
polls without a script run. Streamlit's flags (``--server.port`` and the others) apply as with
``streamlit run app.py``; they are read before this file, so the route follows
``server.baseUrlPath`` as the pages do.
"""

import streamlit as st

from flowdebug.views import room_pulse

app = st.App("app.py", routes=[room_pulse.route(base=st.get_option("server.baseUrlPath"))])
