"""flowdebug.protocols.anthropic.codec."""
