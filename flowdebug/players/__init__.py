"""Players: who answers as the model (scripted, manual, live vendor SDKs)."""

from flowdebug.players.base import Player, PlayerTurn, WireExchange
from flowdebug.players.manual import ManualPlayer
from flowdebug.players.scripted import ScriptedPlayer, ScriptedTurn

__all__ = ["ManualPlayer", "Player", "PlayerTurn", "ScriptedPlayer", "ScriptedTurn", "WireExchange"]
