"""AWS event-stream framing: how ConverseStream events travel on the wire.

A stream (``application/vnd.amazon.eventstream``) is a sequence of binary messages::

    prelude   total length (u32, the whole message) · headers length (u32) · CRC32 of those 8
    headers   each: name length (u8) · name (UTF-8) · value type (u8) · value
    payload   the event's JSON
    trailer   CRC32 of everything before it (prelude CRC included)

all integers big-endian. An event carries ``:message-type: event``, its ``:event-type``
(``contentBlockDelta``...) and ``:content-type: application/json``; a failure midway is
``:message-type: exception`` with ``:exception-type`` (``throttlingException``...), or
``:message-type: error`` with ``:error-code`` and ``:error-message`` and no payload.

flowdebug writes a stream as ``{"<event-type>": payload}`` objects (boto3's shape);
:func:`event_object` turns a decoded frame into one. Nothing here raises anything but
:class:`EventStreamError`, whose message names the frame and what is wrong with it.
"""

from __future__ import annotations

import json
import struct
import uuid
from collections.abc import Iterator
from typing import Any
from zlib import crc32

from flowdebug import jsontext
from flowdebug.errors import FlowdebugError

CONTENT_TYPE = "application/vnd.amazon.eventstream"
PRELUDE = 12  # total length, headers length, prelude CRC
TRAILER = 4  # the message CRC
# The service's own limits (a header block of 128 KiB, a payload of 24 MiB): a length beyond
# them is a corrupt prelude, not a reason to wait for gigabytes.
MAX_HEADERS = 128 * 1024
MAX_PAYLOAD = 24 * 1024 * 1024

# Header value types, by their type byte.
TRUE, FALSE, BYTE, SHORT, INT, LONG, BYTES, STRING, TIMESTAMP, UUID = range(10)
_FIXED = {BYTE: ">b", SHORT: ">h", INT: ">i", LONG: ">q", TIMESTAMP: ">q"}

Headers = dict[str, Any]


class EventStreamError(FlowdebugError):
    """A frame that is not valid AWS event-stream: which frame, and what is wrong."""


def _crc(data: bytes, start: int = 0) -> int:
    return crc32(data, start) & 0xFFFFFFFF


def _header(name: str, value: Any) -> bytes:
    """One header: strings as type 7, bytes as 6, bools as 0/1, ints as 4 (32-bit) or 5."""
    raw = name.encode()
    if not 0 < len(raw) < 256:
        raise EventStreamError(f"a header name has 1 to 255 bytes, got {len(raw)}: {name!r}")
    head = struct.pack(">B", len(raw)) + raw
    if isinstance(value, bool):
        return head + struct.pack(">B", TRUE if value else FALSE)
    if isinstance(value, int):
        small = -(2**31) <= value < 2**31
        return head + struct.pack(">Bi" if small else ">Bq", INT if small else LONG, value)
    if isinstance(value, uuid.UUID):
        return head + struct.pack(">B", UUID) + value.bytes
    kind, data = (BYTES, value) if isinstance(value, bytes) else (STRING, str(value).encode())
    if len(data) > 0xFFFF:
        raise EventStreamError(f"header {name!r} is {len(data)} bytes; at most 65535 fit")
    return head + struct.pack(">BH", kind, len(data)) + data


def encode_message(headers: Headers, payload: bytes) -> bytes:
    """One event-stream message with ``headers`` (in order) and ``payload``."""
    block = b"".join(_header(k, v) for k, v in headers.items())
    if len(block) > MAX_HEADERS or len(payload) > MAX_PAYLOAD:
        raise EventStreamError(
            f"a message holds at most {MAX_HEADERS} bytes of headers and {MAX_PAYLOAD} of "
            f"payload, got {len(block)} and {len(payload)}"
        )
    prelude = struct.pack(">II", PRELUDE + len(block) + len(payload) + TRAILER, len(block))
    prelude += struct.pack(">I", _crc(prelude))
    body = prelude + block + payload
    return body + struct.pack(">I", _crc(body))


def _json(payload: Any) -> bytes:
    # A payload that is already text (a fault's broken JSON) goes out as it is.
    if isinstance(payload, bytes):
        return payload
    return (payload if isinstance(payload, str) else json.dumps(payload)).encode()


def encode_frame(event_type: str, payload: Any) -> bytes:
    """An event message: ``:event-type`` ``event_type``, JSON ``payload``."""
    headers = {
        ":event-type": event_type,
        ":content-type": "application/json",
        ":message-type": "event",
    }
    return encode_message(headers, _json(payload))


def encode_exception(exception_type: str, payload: Any) -> bytes:
    """An exception message (``throttlingException``...): the stream failed midway."""
    headers = {
        ":exception-type": exception_type,
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    return encode_message(headers, _json(payload))


def encode_error(code: str, message: str) -> bytes:
    """An error message: its code and text travel in headers, with no payload."""
    headers = {":message-type": "error", ":error-code": code, ":error-message": message}
    return encode_message(headers, b"")


def stream_frames(events: list[tuple[str | None, Any]]) -> Iterator[bytes]:
    """The frames of a ConverseStream, one per event, for the emulator.

    Each event is ``(name, data)`` as the emulator holds it: ``data`` is ``{"<type>":
    payload}``; a type ending in ``Exception`` is sent as an exception message; text that is
    not such an object (a fault's malformed event) goes out as a ``contentBlockDelta`` whose
    payload is that text, so the client meets it where it would meet a broken event.
    """
    for name, data in events:
        if isinstance(data, dict) and len(data) == 1:
            kind, payload = next(iter(data.items()))
            encode = encode_exception if kind.endswith("Exception") else encode_frame
            yield encode(kind, payload)
        else:
            yield encode_frame(name or "contentBlockDelta", data)


def _value(kind: int, data: bytes, at: int, name: str) -> tuple[Any, int]:
    if kind in (TRUE, FALSE):
        return kind == TRUE, at
    if kind in _FIXED:
        size = struct.calcsize(_FIXED[kind])
        if at + size > len(data):
            raise EventStreamError(f"header {name!r} is cut short")
        return struct.unpack_from(_FIXED[kind], data, at)[0], at + size
    if kind == UUID:
        if at + 16 > len(data):
            raise EventStreamError(f"header {name!r} is cut short")
        return data[at : at + 16], at + 16
    if kind in (BYTES, STRING):
        if at + 2 > len(data):
            raise EventStreamError(f"header {name!r} is cut short")
        (size,) = struct.unpack_from(">H", data, at)
        end = at + 2 + size
        if end > len(data):
            raise EventStreamError(f"header {name!r} claims {size} bytes; fewer are left")
        raw = data[at + 2 : end]
        if kind == BYTES:
            return raw, end
        try:
            return raw.decode(), end
        except UnicodeDecodeError:
            raise EventStreamError(f"header {name!r} is not UTF-8") from None
    raise EventStreamError(f"header {name!r} has unknown value type {kind}")


def decode_headers(data: bytes) -> Headers:
    """The headers of one message, from its header block."""
    headers: Headers = {}
    at = 0
    while at < len(data):
        size = data[at]
        if size == 0 or at + 1 + size + 1 > len(data):
            raise EventStreamError(f"a header name at byte {at} is empty or cut short")
        try:
            name = data[at + 1 : at + 1 + size].decode()
        except UnicodeDecodeError:
            raise EventStreamError(f"the header name at byte {at} is not UTF-8") from None
        if name in headers:
            raise EventStreamError(f"header {name!r} appears twice")
        headers[name], at = _value(data[at + 1 + size], data, at + 2 + size, name)
    return headers


class FrameReader:
    """Reads messages from bytes as they arrive (a stream cut anywhere)."""

    def __init__(self) -> None:
        self._data = bytearray()
        self.count = 0  # messages read so far

    @property
    def pending(self) -> int:
        """Bytes received that do not make a whole message yet."""
        return len(self._data)

    def feed(self, chunk: bytes) -> list[tuple[Headers, bytes]]:
        """The messages ``chunk`` completes; EventStreamError names the first bad one."""
        self._data += chunk
        out = []
        while len(self._data) >= PRELUDE:
            total = self._check_prelude()
            if len(self._data) < total:
                break
            out.append(self._message(bytes(self._data[:total])))
            del self._data[:total]
            self.count += 1
        return out

    def _where(self) -> str:
        return f"event-stream message {self.count}"

    def _check_prelude(self) -> int:
        total, size, crc = struct.unpack_from(">III", self._data)
        if _crc(bytes(self._data[:8])) != crc:
            raise EventStreamError(
                f"{self._where()}: prelude CRC mismatch (sent 0x{crc:08x}, computed "
                f"0x{_crc(bytes(self._data[:8])):08x}): the length fields are damaged"
            )
        if size > MAX_HEADERS or total < PRELUDE + size + TRAILER:
            raise EventStreamError(
                f"{self._where()}: total length {total} cannot hold {size} bytes of headers"
            )
        if total - PRELUDE - size - TRAILER > MAX_PAYLOAD:
            raise EventStreamError(f"{self._where()}: a payload over {MAX_PAYLOAD} bytes")
        return int(total)

    def _message(self, data: bytes) -> tuple[Headers, bytes]:
        (sent,) = struct.unpack_from(">I", data, len(data) - TRAILER)
        computed = _crc(data[:-TRAILER])
        if sent != computed:
            raise EventStreamError(
                f"{self._where()}: message CRC mismatch (sent 0x{sent:08x}, computed "
                f"0x{computed:08x}): the headers or payload are damaged"
            )
        (size,) = struct.unpack_from(">I", data, 4)
        try:
            headers = decode_headers(data[PRELUDE : PRELUDE + size])
        except EventStreamError as e:
            raise EventStreamError(f"{self._where()}: {e}") from None
        return headers, data[PRELUDE + size : -TRAILER]


def decode_frames(data: bytes) -> list[tuple[Headers, bytes]]:
    """Every message in ``data``, as ``(headers, payload)``; EventStreamError for a damaged
    message or for bytes left over that make no whole message."""
    reader = FrameReader()
    frames = reader.feed(data)
    if reader.pending:
        raise EventStreamError(
            f"event-stream message {reader.count} is cut short: {reader.pending} bytes left "
            "over after the last whole message"
        )
    return frames


def event_object(headers: Headers, payload: bytes) -> Any:
    """A decoded message as flowdebug's stream event: ``{"<event-type>": payload}`` (the
    exception's type for an exception, the error code for an error), or the payload's text
    when it is not JSON or the message names no type, so the decoder can name the problem."""
    kind = headers.get(":message-type", "event")
    if kind == "error":
        code = str(headers.get(":error-code") or "error")
        return {code: {"message": str(headers.get(":error-message") or "")}}
    name = headers.get(":exception-type" if kind == "exception" else ":event-type")
    text = payload.decode("utf-8", "replace")
    try:
        value = jsontext.embedded(text) if text.strip() else {}
    except ValueError:
        return text
    if not isinstance(name, str):
        return text
    return {name: value}


def stream_events(data: bytes) -> list[Any]:
    """A whole event stream's bytes as flowdebug's stream events (:func:`event_object`), in
    order; a damaged or cut frame ends the list with the error's text, as the live player
    records it."""
    reader = FrameReader()
    try:
        events = [event_object(h, p) for h, p in reader.feed(data)]
    except EventStreamError as e:
        return [str(e)]
    if reader.pending:
        events.append(f"event-stream message {reader.count} is cut short")
    return events
