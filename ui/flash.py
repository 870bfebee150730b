"""The one way a page tells a person what their last action did. A helper of the pages, not a
page.

An action (a button's callback, a form) says its outcome with :func:`say` or :func:`error`;
Streamlit then reruns the page, which takes the message once (:func:`take`) and shows it at
the top or beside the control it came from (:func:`show`). Messages said before the page's
next run are all shown (an edit refused by the save after the form took it says both). Their
text is shown exactly as written (Markdown is escaped), since it often quotes
what a person, a model or an import supplied.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import streamlit as st

from ui.text import literal

Kind = Literal["success", "error", "info"]
TOP = "top"
_KEY = "fd_flash"
_ICONS: dict[Kind, str] = {"success": "✅", "error": "⛔", "info": "ℹ️"}


@dataclass(frozen=True)
class Flash:
    """A message for the next run of the page: what it says, how, and where."""

    kind: Kind
    text: str
    where: str = TOP


def say(text: object, *, kind: Kind = "success", where: str = TOP) -> None:
    """Tell the person, on the page's next run, what their action did."""
    st.session_state.setdefault(_KEY, []).append(Flash(kind, str(text), where))


def error(text: object, *, where: str = TOP) -> None:
    """Tell the person why their action was refused (nothing changed)."""
    say(text, kind="error", where=where)


def take() -> list[Flash]:
    """The messages waiting for this run, taken so that each is shown once."""
    return st.session_state.pop(_KEY, [])


def show(said: list[Flash], where: str = TOP, into: Any = st) -> bool:
    """Show those of ``said`` that belong ``where`` (``into`` a container, else in place);
    True when there was one."""
    here = [f for f in said if f.where == where]
    for f in here:
        getattr(into, f.kind)(literal(f.text), icon=_ICONS[f.kind])
    return bool(here)
