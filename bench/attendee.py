"""One simulated attendee: a browser tab reduced to Streamlit's own websocket protocol.

It connects to ``/_stcore/stream`` the way the frontend does (subprotocol ``streamlit``),
asks for the first run, and learns the widgets from the ForwardMsg deltas: each widget's id
(Streamlit spells it ``$$ID-<hash>-<key>``, so the key is the id's tail), whether it is
disabled, a select box's options, and the fragment it was drawn in. A press is what the
frontend sends for a click: a ``rerun_script`` BackMsg carrying a trigger value for that id,
the query string and page the server last gave, and the fragment the button lives in (so a
page that moves its controls into an ``st.fragment`` is driven as a browser would drive it).

Latency of a press: from sending the BackMsg to the ``script_finished`` ForwardMsg of the run
it caused (a run that stops early for an ``st.rerun`` is followed to the run that finishes).

Streamlit 1.67 serves over starlette/uvicorn (tornado is no longer installed with it), so the
client is the ``websockets`` package, which Streamlit itself depends on.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, field
from typing import Any

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.typing import Subprotocol

FINAL = {
    ForwardMsg.FINISHED_SUCCESSFULLY,
    ForwardMsg.FINISHED_WITH_COMPILE_ERROR,
    ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY,
}


@dataclass
class Widget:
    """What the last run said about one keyed widget."""

    id: str
    kind: str
    disabled: bool = False
    options: list[str] = field(default_factory=list)
    fragment: str = ""


def widget_key(widget_id: str) -> str | None:
    """The user key at the tail of a Streamlit element id, or None for an unkeyed widget."""
    if not widget_id.startswith("$$ID-"):
        return None
    parts = widget_id.split("-", 2)
    return parts[2] if len(parts) == 3 and parts[2] != "None" else None


class Attendee:
    """One browser session on the server, driven over its websocket."""

    def __init__(self, url: str, query: str = "", timeout: float = 120.0):
        self.url = url.replace("http://", "ws://").rstrip("/") + "/_stcore/stream"
        self.query = query
        self.timeout = timeout
        self.page_hash = ""
        self.widgets: dict[str, Widget] = {}
        self.exceptions: list[str] = []
        self.texts: list[str] = []  # markdown of the last run (to read status lines)
        self.bytes_in = 0
        self.msgs_in = 0  # ForwardMsgs received (with bytes_in: what a Step costs the wire)
        self._ws: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._finished: asyncio.Future[int] | None = None

    # -- connection -------------------------------------------------------------------------

    async def connect(self) -> float:
        """Open the websocket and wait for the first run (a page load); its ms."""
        self._ws = await websockets.connect(
            self.url,
            subprotocols=[Subprotocol("streamlit")],
            max_size=None,
            open_timeout=self.timeout,
        )
        self._reader = asyncio.create_task(self._read())
        return await self.rerun({})

    async def close(self) -> None:
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader

    async def _read(self) -> None:
        try:
            async for data in self._ws:
                self.bytes_in += len(data)
                self.msgs_in += 1
                msg = ForwardMsg()
                msg.ParseFromString(data)
                self._on(msg)
        except websockets.exceptions.ConnectionClosed:
            pass
        finally:
            if self._finished is not None and not self._finished.done():
                self._finished.set_exception(ConnectionError("websocket closed"))

    def _on(self, msg: ForwardMsg) -> None:
        kind = msg.WhichOneof("type")
        if kind == "new_session":
            self.page_hash = msg.new_session.page_script_hash or self.page_hash
        elif kind == "navigation":
            self.page_hash = msg.navigation.page_script_hash or self.page_hash
        elif kind == "page_info_changed":
            self.query = msg.page_info_changed.query_string
        elif kind == "delta":
            self._on_delta(msg)
        elif kind == "script_finished" and msg.script_finished in FINAL:
            self._finish(msg.script_finished)

    def _finish(self, status: int) -> None:
        if self._finished is not None and not self._finished.done():
            self._finished.set_result(status)

    def _on_delta(self, msg: ForwardMsg) -> None:
        delta = msg.delta
        if delta.WhichOneof("type") != "new_element":
            return
        element = delta.new_element
        which = element.WhichOneof("type")
        if which == "exception":
            self.exceptions.append(element.exception.message)
            return
        if which == "markdown":
            self.texts.append(element.markdown.body)
            return
        proto = getattr(element, which, None) if which else None
        widget_id = getattr(proto, "id", "") if proto is not None else ""
        key = widget_key(widget_id) if isinstance(widget_id, str) else None
        if key is None:
            return
        self.widgets[key] = Widget(
            id=widget_id,
            kind=which or "",
            disabled=bool(getattr(proto, "disabled", False)),
            options=list(getattr(proto, "options", []) or []),
            fragment=delta.fragment_id,
        )

    # -- interaction ------------------------------------------------------------------------

    async def rerun(self, states: dict[str, Any], fragment: str = "") -> float:
        """Send one rerun with ``states`` (widget key → value; True for a button press) and
        wait for the run to finish; the milliseconds it took."""
        back = BackMsg()
        cs = back.rerun_script
        cs.query_string = self.query
        cs.page_script_hash = self.page_hash
        cs.fragment_id = fragment
        for key, value in states.items():
            w = cs.widget_states.widgets.add()
            w.id = self.widgets[key].id
            if value is True:
                w.trigger_value = True
            elif isinstance(value, tuple) and value[0] == "bool":  # a toggle or a checkbox
                w.bool_value = bool(value[1])
            elif isinstance(value, str):
                w.string_value = value
            else:
                raise TypeError(f"no widget value of type {type(value).__name__}")
        self.exceptions.clear()
        self.texts.clear()
        self._finished = asyncio.get_running_loop().create_future()
        t = time.perf_counter()
        await self._ws.send(back.SerializeToString())
        await asyncio.wait_for(self._finished, self.timeout)
        return (time.perf_counter() - t) * 1000

    def can_press(self, key: str) -> bool:
        w = self.widgets.get(key)
        return w is not None and not w.disabled

    async def press(self, key: str) -> float:
        """Click the button keyed ``key`` (in its fragment, if it has one)."""
        return await self.rerun({key: True}, self.widgets[key].fragment)

    async def choose(self, key: str, option: str) -> float:
        """Pick ``option`` (as displayed) in the select box keyed ``key``."""
        return await self.rerun({key: option}, self.widgets[key].fragment)
