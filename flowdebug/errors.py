"""One family of errors. Messages say what went wrong, where, and what to do next."""

from __future__ import annotations


class FlowdebugError(Exception):
    """Base of every error flowdebug raises on purpose."""


class UsageError(FlowdebugError):
    """The person asked for something that cannot be done (bad flag, unknown name)."""


class CodecError(FlowdebugError):
    """A payload does not fit a protocol. ``path`` is a JSON path into the payload."""

    def __init__(self, protocol: str, path: str, message: str):
        self.protocol = protocol
        self.path = path
        self.reason = message
        super().__init__(f"{protocol}: {path}: {message}")


class ProviderError(FlowdebugError):
    """A live vendor call failed; ``body`` is the vendor's own error text, ``hint`` what to
    do next. ``exchange`` (a WireExchange, when the call reached the wire) shows what was
    sent and received."""

    def __init__(
        self, provider: str, status: int | None, body: str, hint: str = "", exchange: object = None
    ):
        self.provider = provider
        self.status = status
        self.body = body
        self.hint = hint
        self.exchange = exchange
        msg = f"{provider} returned {status}: {body}" if status else f"{provider}: {body}"
        super().__init__(f"{msg} — {hint}" if hint else msg)
