"""Which function sends a request through a vendor's SDK: the vendor's facts name the module
(``Facts.sdk_sender``, one per SDK, e.g. ``flowdebug.players.live.openai``) whose ``send`` it
is, so the live player finds the sender by protocol without knowing any vendor; a vendor whose
facts name no sender has no live player. The module is imported on first use, with its SDK (its
``load_sdk()``), one thread at a time: the Compare page asks several
players at once. httpx is loaded before any SDK: an SDK looks it up in ``sys.modules``
(openai's ``_httpx2.py``), and while another thread was importing it through google-genai the
OpenAI call found a partially initialised module (``httpx has no attribute URL``).
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

from flowdebug.errors import UsageError
from flowdebug.protocols import facts

if TYPE_CHECKING:
    from flowdebug.players.live.settings import LiveSettings
    from flowdebug.players.live.wire import Recording

# (body, settings, key, recording, model) -> the body keys the SDK had no parameter for.
Sender = Callable[["dict[str, Any]", "LiveSettings", str, "Recording", str], list[str]]


_IMPORTING = threading.Lock()
_LOADED: dict[str, ModuleType] = {}  # sender modules whose SDK is loaded: no lock after that
# Loaded before every SDK (each SDK depends on it; see the module's docstring).
SHARED = ("httpx",)


def sender_module(protocol: str) -> ModuleType:
    """The module ``protocol``'s facts name, imported with its SDK (UsageError when they name
    none). Imports run under one lock, so threads never import an SDK's modules crosswise."""
    name = facts(protocol).sdk_sender
    if name is None:
        raise UsageError(f"no live player sends {protocol!r} requests")
    if (ready := _LOADED.get(name)) is not None:
        return ready
    with _IMPORTING:
        for shared in SHARED:
            importlib.import_module(shared)
        module = importlib.import_module(name)
        module.load_sdk()
        _LOADED[name] = module
    return module


def sender_for(protocol: str) -> Sender:
    """The ``send`` of the module ``protocol``'s facts name (UsageError when they name none)."""
    return cast(Sender, sender_module(protocol).send)
