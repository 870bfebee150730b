"""flowdebug.protocols.openai_chat.codec."""
