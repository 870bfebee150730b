"""The mcp protocol: its codec and its facts."""

from flowdebug.protocols.mcp.codec import CODEC
from flowdebug.protocols.mcp.facts import FACTS

__all__ = ["CODEC", "FACTS"]
