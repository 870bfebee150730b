"""flowdebug.protocols.mcp.codec."""
