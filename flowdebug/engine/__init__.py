"""flowdebug.engine."""
