"""The emulator's failure modes and each vendor's real error body shapes.

A fault is chosen per request by the ``x-flowdebug-fault`` header, by a model named after it
(``error-429``, ``slow-0.5``), or for the whole server. Error bodies follow what each vendor
really returns, so the live players' error handling is exercised on the genuine shapes:

each vendor declares them in its folder (``protocols/<vendor>/errors.py``, through its facts).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from flowdebug.protocols import facts

FAULTS = {
    "error-400": "400 invalid request",
    "error-401": "a bad API key (each vendor's own answer and status, like the real API)",
    "error-403": "403 permission denied",
    "error-404": "404 unknown model",
    "error-429": "429 rate limited (with retry-after: 1)",
    "error-500": "500 internal error",
    "error-503": "503 unavailable / overloaded",
    "error-529": "529 overloaded (one vendor's own status)",
    "malformed": "200 with a body that is not JSON (a stream: a data line that is not JSON)",
    "wrong-shape": "200 with JSON that is not the protocol's response",
    "slow": "answer after 5 s (slow-N: after N seconds), to exercise client timeouts",
    "drop": "close the connection without answering",
    "stream-error": "a stream that fails after its first event (not streaming: a 500)",
}


@dataclass(frozen=True)
class Fault:
    name: str
    seconds: float = 0.0

    @property
    def status(self) -> int | None:
        m = re.fullmatch(r"error-(\d{3})", self.name)
        return int(m.group(1)) if m else None


def parse_fault(text: str | None) -> Fault | None:
    """The fault ``text`` names (``error-429``, ``slow-0.5``, ...), or None."""
    if not text:
        return None
    text = text.strip().lower()
    m = re.fullmatch(r"slow(?:-(\d+(?:\.\d+)?))?", text)
    if m:
        return Fault("slow", float(m.group(1) or 5.0))
    if text in FAULTS or re.fullmatch(r"error-\d{3}", text):
        return Fault(text)
    return None


def error_response(
    protocol: str, status: int, model: str, version: str = "v1"
) -> tuple[int, Any, dict[str, str]]:
    """``(status, body, headers)`` of the vendor's answer for an HTTP error ``status`` (the
    shapes each vendor declares in its folder)."""
    errors = facts(protocol).errors
    if errors is None:
        raise ValueError(f"{protocol} declares no error shapes")
    return errors.error_response(status, model, version)


def stream_failure(protocol: str) -> tuple[str | None, Any]:
    """``(SSE event name, data)`` a vendor sends when a stream fails midway."""
    errors = facts(protocol).errors
    if errors is None:
        raise ValueError(f"{protocol} declares no error shapes")
    return errors.stream_failure()
