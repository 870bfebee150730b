"""Token counts from a vendor's own count-tokens endpoint, sent like a live call.

The vendor's facts declare the endpoint (``Facts.token_count``): the body it takes, made from
the codec's request body, and where its answer holds the count. The sender module of the
vendor's SDK (``Facts.sdk_sender``) sends it with its ``count``, through the same recording,
guarded transport as every live call (:mod:`flowdebug.players.live.wire`,
:mod:`flowdebug.players.live.route`), with the same rule on which key may go where
(:class:`~flowdebug.players.live.settings.LiveSettings`). A failure is a
:class:`~flowdebug.errors.ProviderError` worded as a live call's.

A tool set's footprint is the count of the smallest request declaring it less the count of
the same request without it (:func:`flowdebug.protocols.token_estimate.footprint_request`):
what declaring the tools costs on every request, the vendor's own tool-use prompt included.
"""

from __future__ import annotations

import json
import logging

from flowdebug import hosting, protocols
from flowdebug.errors import UsageError
from flowdebug.model import Conversation, Tool
from flowdebug.players.base import WireExchange
from flowdebug.players.live import senders
from flowdebug.players.live.player import _refused, failed
from flowdebug.players.live.settings import LiveSettings
from flowdebug.players.live.wire import Recording
from flowdebug.protocols import facts
from flowdebug.protocols.token_estimate import footprint_request

log = logging.getLogger(__name__)


def can_count(protocol: str) -> bool:
    """Does ``protocol`` have a count-tokens endpoint a live call can reach?"""
    found = facts(protocol)
    return found.token_count is not None and found.sdk_sender is not None


def count_tokens(conv: Conversation, settings: LiveSettings) -> int:
    """The input tokens ``conv`` is for the vendor of ``settings``, counted by its endpoint."""
    s = settings
    found = facts(s.protocol)
    counting = found.token_count
    if counting is None or found.sdk_sender is None:
        raise UsageError(f"{found.title} has no count-tokens endpoint")
    applied = s.apply(conv)
    model = s.model or applied.model or s.model_name
    body = counting.body(protocols.get(s.protocol).encode_request(applied).value, model)
    key = s.resolve_key()
    exchange = WireExchange(s.protocol, codec_request=body)
    refused = hosting.base_url_refusal(s.base_url, found.base_url, s.shown_url)
    if refused is not None:
        raise _refused(s.protocol, refused, exchange)
    recording = Recording()
    failure: Exception | None = None
    try:
        senders.sender_module(s.protocol).count(body, s, key, recording, model)
    except Exception as e:  # classified from the wire below, as a live call's
        failure = e
    capture = recording.last
    tokens, unread = None, None
    if capture is not None and capture.status is not None and capture.status < 400:
        try:
            tokens = counting.read(json.loads(capture.response_text))
        except (ValueError, KeyError, TypeError) as e:
            unread = f"the answer holds no token count: {e}"
    error = failed(s, capture, failure, model, key, unread, exchange)
    if error is not None:
        raise error
    assert tokens is not None
    log.info("count %s %s -> %d tokens", s.protocol, model, tokens)
    return tokens


def footprint(tools: list[Tool], settings: LiveSettings) -> int:
    """What declaring ``tools`` adds to a request, counted by the vendor: the smallest
    request with them less the same request without them."""
    with_tools = count_tokens(footprint_request(tools), settings)
    return with_tools - count_tokens(footprint_request([]), settings)
