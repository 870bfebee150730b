"""What a vendor rejects, as data: the finding type and the rule templates that make findings.

They sit on the linter's floor below the vendor folders because each vendor declares its own
rules in its folder (``protocols/<vendor>/rules.py``, carried by its facts);
:mod:`flowdebug.lint.linter` applies them. Codes are a closed set (:mod:`.codes`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from flowdebug.lint.base.codes import FindingCode

Level = Literal["error", "warning", "info"]


@dataclass(frozen=True)
class Finding:
    """Something a vendor rejects (error), may mishandle (warning) or that is worth knowing (info).

    ``path`` points into the canonical conversation (``messages[3].parts[1]``,
    ``tools[0].parameters.properties.unit``). ``protocol`` is the CLI name of the vendor whose
    rule this is, or None for a protocol-neutral finding. ``code`` is stable for tests and
    filtering. ``vendor_message`` is the vendor's own error text when known; ``message`` is the
    whole human sentence (protocol, what is wrong, and the vendor's text).
    """

    level: Level
    code: FindingCode
    path: str
    message: str
    protocol: str | None = None
    vendor_message: str | None = None


def finding(
    level: Level,
    code: FindingCode,
    path: str,
    summary: str,
    protocol: str | None = None,
    vendor: str | None = None,
) -> Finding:
    """A Finding whose message names the protocol and quotes the vendor's text."""
    message = summary if protocol is None else f"{protocol}: {summary}"
    if vendor:
        message += f' — "{vendor}"'
    return Finding(level, code, path, message, protocol, vendor)


@dataclass(frozen=True)
class Rule:
    """How a vendor answers one situation. ``summary`` and ``vendor`` are ``str.format``
    templates over the fields given to ``at``."""

    level: Level
    summary: str
    vendor: str | None = None

    def at(
        self, code: FindingCode, path: str, protocol: str | None = None, **fields: object
    ) -> Finding:
        vendor = self.vendor.format(**fields) if self.vendor else None
        return finding(
            self.level, code, path, self.summary.format(**fields), protocol, vendor or None
        )
