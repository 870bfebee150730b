"""The store's error, in a module of its own: every store module raises it, and none of them
has to import the database module (which imports the packing at migration 3) to do so."""

from __future__ import annotations

from flowdebug.errors import FlowdebugError


class StoreError(FlowdebugError):
    """The session store cannot do what was asked (unreachable, unreadable, newer schema)."""
