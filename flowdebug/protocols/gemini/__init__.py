"""flowdebug.protocols.gemini.codec."""
