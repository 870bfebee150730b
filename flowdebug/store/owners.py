"""Whose sessions: on a shared server (``FLOWDEBUG_SHARED=1``) a session belongs to the browser
that made it. The store is given that browser's secret as ``owner`` and keeps only a hash of it
(:func:`owner_key`); every read, list and change given an ``owner`` sees only that owner's
sessions and refuses the rest with :class:`NotOwner`. Without ``owner`` (one person's machine,
the CLI) nothing is checked.
"""

from __future__ import annotations

import hashlib

from flowdebug.errors import UsageError


class NotOwner(UsageError):
    """On a shared server, a session that belongs to another browser."""

    def __init__(self, session_id: str):
        self.session_id = session_id
        super().__init__(
            f"session {session_id!r} belongs to another browser: on this shared server a "
            "session opens only in the browser that made it. To share one, export it as a "
            "trace (Sessions page) and let the other person import the file"
        )


def owner_key(secret: str) -> str:
    """What the database keeps of a browser's secret: a hash, so the database does not hold
    the secret itself."""
    return hashlib.sha256(b"flowdebug-owner:" + secret.encode()).hexdigest()


def check_owner(session_id: str, stored: str | None, owner: str | None) -> None:
    """Refuse ``session_id`` (stored with the owner key ``stored``) to ``owner``, unless it is
    theirs; no ``owner``, no check."""
    if owner is not None and stored != owner_key(owner):
        raise NotOwner(session_id)
