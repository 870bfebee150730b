"""flowdebug.players.live.player."""
