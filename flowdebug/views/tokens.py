"""Tokens, as the pages show them: what each vendor reported for each model turn, and what
declaring the tools costs in each vendor.

- **Usage per model turn**: the session's exchanges keep every vendor answer exactly as it
  came (a live call's, a recording's, an imported response's); each is decoded by its
  vendor's codec, and the turn's usage is the vendor's own numbers under the canonical names
  (``input_tokens``, ``output_tokens``, ``cached_tokens``, ``reasoning_tokens``...). A turn
  no vendor answered (the scripted or offline model) reported none.
- **The tools' footprint**: counted by the vendor's count-tokens endpoint when a key (or a
  local server) is there for it (:mod:`flowdebug.players.live.counting`); otherwise a
  labelled estimate, chars / 4 of the tools JSON as that vendor declares them
  (:mod:`flowdebug.protocols.token_estimate`, which says why no tokenizer is used offline).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flowdebug import protocols
from flowdebug.engine.session.player_choice import PlayerChoice
from flowdebug.engine.session.session_state import SessionState
from flowdebug.errors import FlowdebugError
from flowdebug.model import Tool
from flowdebug.players.live.counting import can_count, footprint
from flowdebug.players.live.settings import LiveSettings
from flowdebug.protocols.token_estimate import tools_estimate

COUNTED = "counted"
# Seconds a count may take (a page waits for it): counting is quick where it works at all.
COUNT_TIMEOUT = 20.0
ESTIMATED = "estimated"


@dataclass(frozen=True)
class Footprint:
    """What declaring the tools costs in one vendor: ``tokens`` and how it was found."""

    protocol: str
    tokens: int
    how: str  # counted | estimated
    note: str  # the endpoint that counted, or what the estimate is and why

    def row(self) -> dict[str, Any]:
        """One row of the footprint table."""
        facts = protocols.facts(self.protocol)
        shown = str(self.tokens) if self.how == COUNTED else f"≈ {self.tokens}"
        return {"vendor": facts.title, "tokens": shown, "how": self.how, "note": self.note}


def count_settings(protocol: str, choice: PlayerChoice | None = None) -> LiveSettings | None:
    """How to reach ``protocol``'s count-tokens endpoint, or None when nothing may: the live
    player's own settings for its vendor (its typed key, its base URL: a local server or the
    emulator), else the vendor's endpoint when the server's environment holds its key."""
    if not can_count(protocol):
        return None
    if choice is not None and choice.kind == "live" and choice.protocol == protocol:
        return LiveSettings(
            protocol,
            model=choice.model,
            base_url=choice.base_url,
            api_key=choice.api_key,
            timeout=COUNT_TIMEOUT,
        )
    settings = LiveSettings(protocol, timeout=COUNT_TIMEOUT)
    return settings if settings.key_source in protocols.facts(protocol).key_env else None


def estimated(protocol: str, tools: list[Tool], why: str = "") -> Footprint:
    """The offline estimate of ``tools`` in ``protocol``, saying what it is (and ``why`` no
    count was made, when one was tried)."""
    tokens, method = tools_estimate(protocol, tools)
    note = method + (f"; {why}" if why else "")
    return Footprint(protocol, tokens, ESTIMATED, note)


def footprints(
    tools: list[Tool],
    names: list[str] | None = None,
    choice: PlayerChoice | None = None,
    count: bool = True,
) -> list[Footprint]:
    """The footprint of ``tools`` in each vendor of ``names`` (every model vendor by
    default): counted where :func:`count_settings` finds a way (and ``count`` asks for it:
    a count is two calls to the vendor), else estimated. A count the vendor refused falls
    back to the estimate, with the vendor's words."""
    out = []
    for name in names or protocols.model_protocols():
        settings = count_settings(name, choice)
        counting = protocols.facts(name).token_count
        if settings is None or counting is None or not count:
            why = (
                "the vendor has no count-tokens endpoint"
                if counting is None
                else "no key for it here"
                if settings is None
                else "not counted yet"
            )
            out.append(estimated(name, tools, why))
            continue
        try:
            tokens = footprint(tools, settings)
        except FlowdebugError as e:
            out.append(estimated(name, tools, f"the count failed: {e}"))
            continue
        out.append(Footprint(name, tokens, COUNTED, f"counted by {counting.endpoint}"))
    return out


def countable(choice: PlayerChoice | None = None) -> list[str]:
    """The vendors whose count-tokens endpoint can be reached now (:func:`count_settings`)."""
    return [n for n in protocols.model_protocols() if count_settings(n, choice) is not None]


# -- usage per model turn ----------------------------------------------------------------


@dataclass(frozen=True)
class TurnUsage:
    """The usage one vendor reported for one model turn."""

    step: int | None  # the debugger step of the turn (None: a recording's, in order)
    protocol: str
    model: str | None
    usage: dict[str, int]
    source: str  # live call | recorded | imported

    def row(self) -> dict[str, Any]:
        """One row of the usage table: the vendor's counts under their canonical names."""
        return {
            "step": self.step,
            "vendor": protocols.facts(self.protocol).title,
            "model": self.model or "",
            **self.usage,
            "from": self.source,
        }


def _source(exchange: dict[str, Any]) -> str:
    if exchange.get("imported"):
        return "imported"
    return "recorded" if exchange.get("recorded") else "live call"


def _usage(exchange: dict[str, Any]) -> TurnUsage | None:
    """The usage the vendor reported in one exchange's answer, None when it holds none."""
    name = exchange.get("protocol")
    if name not in protocols.PROTOCOLS or protocols.facts(str(name)).kind != "model":
        return None
    status = exchange.get("status")
    if isinstance(status, int) and status >= 400:
        return None
    codec = protocols.get(str(name))
    try:
        if exchange.get("stream_events") is not None:
            decoded = codec.decode_stream(exchange["stream_events"]).value
        elif isinstance(exchange.get("response"), dict):
            decoded = codec.decode_response(exchange["response"]).value
        else:
            return None
    except (FlowdebugError, RecursionError, TypeError, KeyError, ValueError):
        return None
    if not decoded.usage:
        return None
    step = exchange.get("step", exchange.get("at_step"))
    return TurnUsage(
        step if isinstance(step, int) else None,
        str(name),
        decoded.model,
        dict(decoded.usage),
        _source(exchange),
    )


def turn_usage(state: SessionState) -> list[TurnUsage]:
    """The usage each vendor reported, one entry per model turn it answered, in order."""
    return [u for x in state.exchanges if isinstance(x, dict) and (u := _usage(x)) is not None]


def usage_rows(state: SessionState) -> list[dict[str, Any]]:
    """:func:`turn_usage` as table rows, with a total row when there are several."""
    rows = [u.row() for u in turn_usage(state)]
    if len(rows) > 1:
        keys = [k for r in rows for k, v in r.items() if isinstance(v, int) and k != "step"]
        total = {k: sum(int(r.get(k) or 0) for r in rows) for k in dict.fromkeys(keys)}
        rows.append({"step": None, "vendor": "total", "model": "", **total, "from": ""})
    return rows
