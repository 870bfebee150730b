"""The bedrock protocol: its codec and its facts."""

from flowdebug.protocols.bedrock.codec import CODEC
from flowdebug.protocols.bedrock.facts import FACTS

__all__ = ["CODEC", "FACTS"]
