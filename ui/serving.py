"""What the app's server does once per process, before it accepts a browser: the Streamlit side
of serving a room (the socket side is :func:`flowdebug.emulator.serving.nodelay_on_accept`).

Streamlit starts every script run, a fragment's too, with a ``new_session`` message that carries
the app's theme, read from the config one section at a time: each of six sections walks all
of Streamlit's few hundred options to find its own. That was 3 % of the server's time with a
room of 30 stepping (py-spy, bench/workshop_load.py). The theme cannot change while the server
runs (``st.set_option`` refuses theme options; a reparsed config file is caught below), so
:func:`theme_once` builds each section's message once and copies it into every later message.

A helper of the pages, not a page: ``serve.py`` calls it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from streamlit import config
from streamlit.runtime import app_session


def theme_once() -> bool:
    """Make Streamlit build each theme section of ``new_session`` once per parsed config.
    False (and nothing changed) when this Streamlit has no such step to wrap: a test says so."""
    populate = getattr(app_session, "_populate_theme_msg", None)
    if populate is None:
        return False
    if getattr(populate, "flowdebug", False):
        return True  # twice is once
    app_session._populate_theme_msg = _cached(populate)
    return True


def _cached(populate: Callable[..., None]) -> Callable[..., None]:
    built: dict[str, Any] = {}
    lock = threading.Lock()

    def forget() -> None:
        with lock:
            built.clear()

    # Emptied at every later parse of the config (it starts empty: nothing to forget now).
    config.on_config_parsed(forget, force_connect=True)

    def populate_theme(msg: Any, section: str = "theme") -> None:
        with lock:
            done = built.get(section)
        if done is None:
            # Built on a message of its own: ``msg`` may already hold other sections' fields
            # (the top-level theme message holds the light and dark ones once they are set).
            done = type(msg)()
            populate(done, section)
            with lock:
                built[section] = done
        if done.ListFields():  # a section with nothing set leaves the message untouched
            msg.MergeFrom(done)

    # Marked as nodelay_on_accept marks its own wrapper: ours, and what it wraps.
    populate_theme.flowdebug = True  # type: ignore[attr-defined]
    populate_theme.__wrapped__ = populate  # type: ignore[attr-defined]
    return populate_theme
