"""Whose sessions: on a shared server, a browser's own. This browser's secret, kept in a cookie;
the session store keeps only its hash (:mod:`flowdebug.store.owners`).

A helper of the pages, not a page: app.py lists the pages st.navigation runs.
"""

from __future__ import annotations

import re
import secrets

import streamlit as st

from flowdebug import hosting

OWNER_COOKIE = "flowdebug_owner"
_TOKEN = re.compile(r"[A-Za-z0-9_-]{32,128}")
# Streamlit reads cookies (st.context.cookies) but cannot set one: this script does, in the
# page itself (st.html, not iframed). Not HttpOnly, which a script cannot set; what a page
# shows is never HTML (literal()), so no other script runs here to read it.
_SET_COOKIE = """<script>
document.cookie = "%s=%s; Path=/; Max-Age=31536000; SameSite=Strict"
  + (location.protocol === "https:" ? "; Secure" : "");
</script>"""


def owner() -> str | None:
    """On a shared server (FLOWDEBUG_SHARED=1), this browser's secret: the sessions it made
    are its own, and no other browser can list, open, rename or delete them. Kept in a
    cookie (a link carries only a session's id, never this). None on one person's machine,
    where every session is everyone's."""
    if not hosting.shared():
        return None
    if "fd_owner" not in st.session_state:
        cookie = _cookie()
        st.session_state.fd_owner = (
            cookie if _TOKEN.fullmatch(cookie) else secrets.token_urlsafe(32)
        )
    return st.session_state.fd_owner


def _cookie() -> str:
    value = st.context.cookies.get(OWNER_COOKIE)
    return value if isinstance(value, str) else ""  # AppTest has no browser, no cookies


def keep_owner_cookie() -> None:
    """Give the browser its secret once per tab when its cookie does not hold it yet."""
    secret = owner()
    if secret is None or st.session_state.get("fd_owner_sent") == secret:
        return
    if _cookie() != secret:
        st.html(_SET_COOKIE % (OWNER_COOKIE, secret), unsafe_allow_javascript=True)
    st.session_state.fd_owner_sent = secret
