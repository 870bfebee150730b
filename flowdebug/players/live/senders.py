"""Which function sends a request through a vendor's SDK: a registry keyed by the SDK's
package, filled by the sender modules themselves (``@sends_through("openai")``).

A vendor's facts name the SDK its live player uses (``Facts.sdk``), so the live player looks
the sender up by protocol without knowing any vendor; a vendor whose facts name no SDK has
no live player.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from flowdebug.errors import UsageError
from flowdebug.protocols import facts

if TYPE_CHECKING:
    from flowdebug.players.live.settings import LiveSettings
    from flowdebug.players.live.wire import Recording

# (body, settings, key, recording, model) -> the body keys the SDK had no parameter for.
Sender = Callable[["dict[str, Any]", "LiveSettings", str, "Recording", str], list[str]]

_SENDERS: dict[str, Sender] = {}


def sends_through(sdk: str) -> Callable[[Sender], Sender]:
    """Registers the decorated function as the sender of every vendor whose SDK is ``sdk``."""

    def register(send: Sender) -> Sender:
        _SENDERS[sdk] = send
        return send

    return register


def registered(sdk: str) -> bool:
    """A sender for the SDK package ``sdk`` is registered."""
    return sdk in _SENDERS


def sender_for(protocol: str) -> Sender:
    """The sender for ``protocol``'s SDK (UsageError when it has no live player)."""
    sdk = facts(protocol).sdk
    if sdk is None or sdk not in _SENDERS:
        raise UsageError(f"no live player sends {protocol!r} requests")
    return _SENDERS[sdk]
