"""Players: who answers as the model (scripted, the offline model that reads the request,
manual, keyword, live vendor SDKs)."""

from flowdebug.players.base import Player, PlayerTurn, WireExchange
from flowdebug.players.keyword import KeywordPlayer, KeywordRule
from flowdebug.players.live.player import LivePlayer, LiveSettings, live_player
from flowdebug.players.manual import ManualPlayer
from flowdebug.players.reading import ReadingPlayer
from flowdebug.players.scripted import ScriptedPlayer, ScriptedTurn

__all__ = [
    "KeywordPlayer",
    "KeywordRule",
    "LivePlayer",
    "LiveSettings",
    "ManualPlayer",
    "Player",
    "PlayerTurn",
    "ReadingPlayer",
    "ScriptedPlayer",
    "ScriptedTurn",
    "WireExchange",
    "live_player",
]
