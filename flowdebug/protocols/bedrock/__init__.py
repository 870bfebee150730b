"""Amazon Bedrock Converse: the fifth model protocol (``bedrock``)."""

from flowdebug.protocols.bedrock.codec import CODEC

__all__ = ["CODEC"]
