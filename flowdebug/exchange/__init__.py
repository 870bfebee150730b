"""flowdebug.exchange."""
