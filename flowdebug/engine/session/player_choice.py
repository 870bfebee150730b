"""Who plays the model, chosen by a person: the scenario's script, the offline model that reads
the request, the person, or a live model.

Streamlit-free: the sidebar gathers the choice into a :class:`PlayerChoice`, and
:func:`make_player` builds the player. A typed API key lives only in the choice object held by
that browser session; :meth:`PlayerChoice.public` is what may be shown or saved.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from flowdebug import protocols
from flowdebug.engine.session import scenarios
from flowdebug.engine.session.session_state import PlayerSettings, SessionState
from flowdebug.errors import FlowdebugError, UsageError
from flowdebug.players import ManualPlayer, Player
from flowdebug.players.live.player import LivePlayer
from flowdebug.players.live.settings import LIVE_PROTOCOLS, LiveSettings
from flowdebug.players.reading import ReadingPlayer
from flowdebug.redact import strip_url_credentials

KINDS = ("scripted", "offline", "manual", "live")
LABELS = {
    "scripted": "Scripted",
    "offline": "Offline model (reads the request)",
    "manual": "Manual (you)",
    "live": "Live model",
}


def default_kind(scenario: str | None) -> str:
    """A scenario plays its script; a session of your own, the offline model that reads it."""
    return "scripted" if scenario else "offline"


def default_player(scenario: str | None) -> Player:
    """The player a session starts with (see :func:`default_kind`)."""
    return make_player(PlayerChoice(kind=default_kind(scenario)), scenario)


@dataclass(frozen=True)
class PlayerChoice:
    kind: str = "scripted"
    # Until a person picks one: the protocol local model servers speak (no key needed).
    protocol: str = field(default_factory=lambda: protocols.default_protocol(local=True))
    model: str | None = None
    base_url: str | None = None
    stream: bool = False
    api_key: str | None = field(default=None, repr=False, compare=False)

    @property
    def shown_url(self) -> str | None:
        """``base_url`` without the credentials it may carry."""
        return strip_url_credentials(self.base_url) if self.base_url else None

    def public(self) -> dict[str, Any]:
        """Everything but the key (which becomes where it comes from) and the credentials
        inside the base URL."""
        return {
            "kind": self.kind,
            "protocol": self.protocol,
            "model": self.model,
            "base_url": self.shown_url,
            "stream": self.stream,
            "api_key": "typed" if self.api_key else "environment",
        }

    def settings(self) -> PlayerSettings:
        """What the session keeps of this choice: :meth:`public` without the key."""
        public = self.public()
        del public["api_key"]
        return PlayerSettings(**public)

    @classmethod
    def of(cls, settings: PlayerSettings, api_key: str | None = None) -> PlayerChoice:
        """The choice a session kept (``api_key``: one typed in this browser session)."""
        protocol = settings.protocol or protocols.default_protocol(local=True)
        return cls(
            kind=settings.kind,
            protocol=protocol,
            model=settings.model,
            base_url=settings.base_url,
            stream=settings.stream,
            api_key=api_key,
        )

    def label(self) -> str:
        if self.kind != "live":
            return self.kind
        where = self.shown_url or "vendor API"
        return f"{self.protocol}:{self.model or 'default model'} @ {where}"


def make_player(
    choice: PlayerChoice, scenario: str | None, models: Mapping[str, str] | None = None
) -> Player:
    """The player for ``choice``; the scripted one replays ``scenario``. A live player without
    a model of its own gets the session's model for its vendor (``models``), else the
    vendor's default."""
    match choice.kind:
        case "scripted":
            if not scenario:
                raise UsageError(
                    "this session has no scenario to replay: choose the offline model, the "
                    "manual or a live player"
                )
            return scenarios.load(scenario).player()
        case "offline":
            return ReadingPlayer()
        case "manual":
            return ManualPlayer()
        case "live":
            if choice.protocol not in LIVE_PROTOCOLS:
                raise UsageError(
                    f"no live player for {choice.protocol!r}; choose one of: "
                    f"{', '.join(LIVE_PROTOCOLS)}"
                )
            return LivePlayer(
                LiveSettings(
                    protocol=choice.protocol,
                    model=choice.model or (models or {}).get(choice.protocol) or None,
                    base_url=choice.base_url or None,
                    stream=choice.stream,
                    api_key=choice.api_key or None,
                )
            )
    raise UsageError(f"unknown player kind {choice.kind!r}; choose one of: {', '.join(KINDS)}")


def restore_player(state: SessionState, api_key: str | None = None) -> Player:
    """The player a saved session kept (:attr:`SessionState.player`), else its default; a kept
    choice that cannot be made again here (its scenario is gone, its API unknown) gives the
    default, and a scenario that is gone, the manual player."""
    if state.player is not None:
        try:
            return make_player(PlayerChoice.of(state.player, api_key), state.scenario, state.models)
        except FlowdebugError:
            pass
    try:
        return default_player(state.scenario)
    except FlowdebugError:
        return ManualPlayer()
