"""Live call failures as :class:`ProviderError`: the vendor's own words and what to do next.

Classification works from the wire capture rather than from each SDK's exception classes, so
every vendor's SDK (and OpenAI-compatible servers) fails the same way: an HTTP error status, an
error event inside a stream, no answer in time, no connection, or a body that is not the
protocol's response.
"""

from __future__ import annotations

import json
from typing import Any

from flowdebug.errors import ProviderError
from flowdebug.players.live.wire import REDACTED, Capture
from flowdebug.protocols import facts
from flowdebug.redact import strip_urls_in_text


def _clip(text: str, limit: int = 2000) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + " …"


def _from_json(data: Any) -> str | None:
    # Gemini sometimes wraps its error object in a one-element array.
    if isinstance(data, list) and len(data) == 1:
        data = data[0]
    if not isinstance(data, dict):
        return None
    err = data.get("error", data if "message" in data else None)
    if isinstance(err, str):
        return err
    if isinstance(err, dict) and isinstance(err.get("message"), str):
        kind = next(
            (err[k] for k in ("type", "status", "code") if isinstance(err.get(k), str)), None
        )
        kind = None if kind == "error" else kind
        return f"{kind}: {err['message']}" if kind else err["message"]
    if isinstance(data.get("detail"), str):  # FastAPI-based local servers
        return data["detail"]
    return None


def vendor_message(text: str) -> str:
    """The vendor's own error text from an error body (``type: message`` when it has both)."""
    try:
        found = _from_json(json.loads(text))
    except ValueError:
        found = None
    return found or _clip(text) or "(empty response body)"


def stream_error(events: list[Any] | None) -> str | None:
    """The error a vendor reported inside a stream that had started fine, if any."""
    for event in events or []:
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        if kind == "error" or (kind is None and "error" in event):
            return _from_json(event) or _clip(json.dumps(event))
        if kind == "response.failed":
            error = (event.get("response") or {}).get("error") or {}
            return _from_json({"error": error}) or "the response failed"
        # An AWS event-stream exception message (Bedrock's ConverseStream), as the capture
        # holds it: {"throttlingException": {"message": ...}}.
        if kind is None and len(event) == 1:
            ((name, body),) = event.items()
            if isinstance(name, str) and name.endswith("Exception") and isinstance(body, dict):
                return f"{name}: {body.get('message') or json.dumps(body)}"
    return None


def key_hint(protocol: str) -> str:
    names = " or ".join(facts(protocol).key_env)
    return f"type the API key in the sidebar or set {names}"


def _status_hint(
    protocol: str,
    status: int,
    message: str,
    model: str,
    base_url: str | None,
    headers: dict[str, str],
) -> str:
    if status in (401, 403) or "API_KEY_INVALID" in message or "API key not valid" in message:
        lacks = "the key lacks permission for this model or feature; " if status == 403 else ""
        return f"{lacks}check the API key: {key_hint(protocol)}"
    if status == 404:
        where = f" and that {base_url} serves the {facts(protocol).api} API" if base_url else ""
        return f"check the model name {model!r}{where}"
    if status == 429:
        after = headers.get("retry-after")
        wait = f" {after} s" if after else " a moment"
        return f"rate limited or out of quota: wait{wait}, then retry the step"
    if status in (408, 409) or status >= 500:
        return "the vendor failed on its side: retry the step in a moment"
    if 400 <= status < 500:
        return (
            "the vendor rejected the request: read its message (the Protocols page's linter "
            "may name the rule), edit the history or tools, and retry"
        )
    return "retry the step; the exchange on the wire shows what came back"


def _is_timeout(exc: BaseException | None) -> bool:
    seen = 0
    while exc is not None and seen < 10:
        # httpx/httpx2 ReadTimeout, ConnectTimeout; anthropic/openai APITimeoutError.
        if isinstance(exc, TimeoutError) or "Timeout" in type(exc).__name__:
            return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False


def _root(exc: BaseException | None) -> str:
    """The innermost cause's type and message: SDK wrappers say only "Connection error."."""
    seen = 0
    while exc is not None and seen < 10 and (exc.__cause__ or exc.__context__) is not None:
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return f"{type(exc).__name__}: {exc}" if exc is not None else "unknown failure"


def _scrub(text: str, secret: str | None) -> str:
    text = strip_urls_in_text(text)
    return text.replace(secret, REDACTED) if secret and len(secret) >= 4 else text


def _not_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return True
    return False


def classify(
    protocol: str,
    capture: Capture | None,
    exc: BaseException | None,
    *,
    model: str,
    base_url: str | None,
    timeout: float,
    secret: str | None,
    decode_error: str | None = None,
    exchange: Any = None,
) -> ProviderError | None:
    """The ProviderError for a failed call, or None when it succeeded.

    ``exc`` is what the SDK raised (if anything) and ``decode_error`` what the codec said
    about a 2xx body; the capture decides which failure it was.
    """

    def error(status: int | None, body: str, hint: str) -> ProviderError:
        return ProviderError(protocol, status, _scrub(body, secret), hint, exchange)

    if _is_timeout(exc):
        return error(
            None,
            f"no answer within {timeout:g} s",
            "retry the step, or raise the timeout (slow models and long histories take longer)",
        )
    if capture is None:
        # Nothing reached the wire: the SDK refused the body before sending it.
        return error(
            None,
            f"the SDK refused the request before sending it: {_root(exc)}",
            "the codec's request does not fit this SDK; edit the history or report it",
        )
    if capture.status is None:
        where = base_url or "the vendor's API"
        if _connect_failed(exc):
            return error(
                None,
                f"could not connect: {_root(exc)}",
                f"check that {where} is reachable (base_url, network, the local server running)",
            )
        return error(
            None,
            f"the server closed the connection without answering: {_root(exc)}",
            f"retry the step; if it keeps happening, check that {where} speaks this API",
        )
    if capture.status >= 400:
        message = vendor_message(capture.response_text)
        hint = _status_hint(
            protocol, capture.status, message, model, base_url, capture.response_headers
        )
        return error(capture.status, message, hint)
    failed = stream_error(capture.events)
    if failed:
        return error(None, failed, "the vendor failed in the middle of the stream: retry the step")
    events = capture.events or []
    bad = next((i for i, e in enumerate(events) if isinstance(e, str)), None)
    if bad is not None:
        detail = f"stream event {bad} is not JSON: {_clip(str(events[bad]), 200)}"
        return malformed(protocol, detail, secret, exchange)
    if capture.events is None and capture.complete and _not_json(capture.response_text):
        detail = f"the body is not JSON: {_clip(capture.response_text, 200)}"
        return malformed(protocol, detail, secret, exchange)
    if decode_error is not None:
        return malformed(protocol, decode_error, secret, exchange)
    if exc is not None and not capture.complete:
        return error(
            None, f"the connection broke before the response ended: {_root(exc)}", "retry the step"
        )
    if exc is not None:
        return malformed(protocol, _root(exc), secret, exchange)
    return None


def _connect_failed(exc: BaseException | None) -> bool:
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, ConnectionRefusedError) or type(exc).__name__ == "ConnectError":
            return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False


def malformed(
    protocol: str, detail: str, secret: str | None = None, exchange: Any = None
) -> ProviderError:
    """A 2xx answer that is not a valid response of ``protocol``."""
    return ProviderError(
        protocol,
        None,
        _scrub(f"the response is not a valid {facts(protocol).api} response: {detail}", secret),
        f"check that base_url points at a server speaking the {facts(protocol).api} API, then "
        "retry the step",
        exchange,
    )
