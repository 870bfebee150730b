"""The openai responses protocol: its codec and its facts."""

from flowdebug.protocols.openai_responses.codec import CODEC
from flowdebug.protocols.openai_responses.facts import FACTS

__all__ = ["CODEC", "FACTS"]
