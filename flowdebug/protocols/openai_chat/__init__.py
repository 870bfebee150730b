"""The openai chat protocol: its codec and its facts."""

from flowdebug.protocols.openai_chat.codec import CODEC
from flowdebug.protocols.openai_chat.facts import FACTS

__all__ = ["CODEC", "FACTS"]
