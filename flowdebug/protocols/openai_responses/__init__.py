"""flowdebug.protocols.openai_responses.codec."""
