"""The anthropic protocol: its codec and its facts."""

from flowdebug.protocols.anthropic.codec import CODEC
from flowdebug.protocols.anthropic.facts import FACTS

__all__ = ["CODEC", "FACTS"]
