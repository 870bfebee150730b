"""The one registry of vendor protocols: codec by CLI name, in registration order.

``protocols/__init__.py`` registers the six vendors' codecs (one line each); everything that
lists, counts or looks up vendors reads this dict, directly or through ``flowdebug.protocols``.
A codec carries its facts, so the facts are found here too (:func:`known`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from flowdebug.protocols.base import Codec
    from flowdebug.protocols.facts import Facts

PROTOCOLS: dict[str, Codec] = {}


def register(codec: Codec) -> Codec:
    """Adds ``codec`` (a new vendor: its folder's ``CODEC``) under its name; a codec of the
    same name is replaced."""
    PROTOCOLS[codec.name] = codec
    return codec


def unregister(name: str) -> None:
    """Removes the vendor called ``name`` (a test's toy vendor); nothing when it is absent."""
    PROTOCOLS.pop(name, None)


def known(name: str) -> Facts:
    """The facts of the vendor called ``name`` (KeyError for one never registered)."""
    return PROTOCOLS[name].facts
