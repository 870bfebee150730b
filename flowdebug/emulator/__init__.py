"""flowdebug.emulator.server."""
