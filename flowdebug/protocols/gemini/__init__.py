"""The gemini protocol: its codec and its facts."""

from flowdebug.protocols.gemini.codec import CODEC
from flowdebug.protocols.gemini.facts import FACTS

__all__ = ["CODEC", "FACTS"]
