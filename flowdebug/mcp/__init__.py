"""flowdebug.mcp."""
