"""Which function sends a request through a vendor's SDK: the vendor's facts name the module
(``Facts.sdk_sender``, one per SDK, e.g. ``flowdebug.players.live.openai``) whose ``send`` it
is, so the live player finds the sender by protocol without knowing any vendor; a vendor whose
facts name no sender has no live player. The module is imported on first use: it loads the
SDK and an HTTP client.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from flowdebug.errors import UsageError
from flowdebug.protocols import facts

if TYPE_CHECKING:
    from flowdebug.players.live.settings import LiveSettings
    from flowdebug.players.live.wire import Recording

# (body, settings, key, recording, model) -> the body keys the SDK had no parameter for.
Sender = Callable[["dict[str, Any]", "LiveSettings", str, "Recording", str], list[str]]


def sender_for(protocol: str) -> Sender:
    """The ``send`` of the module ``protocol``'s facts name (UsageError when they name none)."""
    module = facts(protocol).sdk_sender
    if module is None:
        raise UsageError(f"no live player sends {protocol!r} requests")
    return cast(Sender, importlib.import_module(module).send)
