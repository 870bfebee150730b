"""flowdebug.cli.main."""
