"""flowdebug.store.sessions."""
