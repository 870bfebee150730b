"""The finding type of the linter (declared beside the codecs, whose rules make findings)."""

from __future__ import annotations

from flowdebug.protocols.findings import Finding, Level, Rule, finding

__all__ = ["Finding", "Level", "Rule", "finding"]
