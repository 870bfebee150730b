"""AWS event-stream framing (protocols/bedrock/eventstream.py), checked three ways: botocore's
own reader and ConverseStream parser read our frames; our reader reads the frames of
botocore's test suite; and one frame is checked byte by byte against the spec's layout."""

from __future__ import annotations

import json
import struct
import zlib

import pytest
from botocore.eventstream import EventStream, EventStreamBuffer
from botocore.exceptions import EventStreamError as BotocoreStreamError
from botocore.parsers import create_parser
from botocore.session import get_session

from flowdebug import protocols
from flowdebug.protocols.bedrock.eventstream import (
    CONTENT_TYPE,
    EventStreamError,
    FrameReader,
    decode_frames,
    encode_error,
    encode_exception,
    encode_frame,
    encode_message,
    event_object,
    stream_frames,
)
from tests import cases

# Messages from botocore's own test suite (tests/unit/test_eventstream.py, Apache-2.0), with
# the headers and payload they hold.
BOTOCORE_VECTORS = [
    (b"\x00\x00\x00\x10\x00\x00\x00\x00\x05\xc2H\xeb}\x98\xc8\xff", {}, b""),
    (b"\x00\x00\x00\x17\x00\x00\x00\x07)\x86\x01X\x04byte\x02\xff\xc2\xf8i\xdc", {"byte": -1}, b""),
    (
        b"\x00\x00\x00\x1e\x00\x00\x00\x0e]J\xdb\x8d\x04long\x05\xff\xff\xff\xff\xff\xff\xff\xff"
        b"K\xc22\xda",
        {"long": -1},
        b"",
    ),
    (
        b"\x00\x00\x00=\x00\x00\x00 \x07\xfd\x83\x96\x0ccontent-type\x07\x00\x10"
        b"application/json{'foo':'bar'}\x8d\x9c\x08\xb1",
        {"content-type": "application/json"},
        b"{'foo':'bar'}",
    ),
    (
        b"\x00\x00\x00\x62\x00\x00\x00\x52\x03\xb5\xcb\x9c"
        b"\x010\x00\x011\x01\x012\x02\x02\x013\x03\x00\x03"
        b"\x014\x04\x00\x00\x00\x04\x015\x05\x00\x00\x00\x00\x00\x00\x00\x05"
        b"\x016\x06\x00\x05bytes\x017\x07\x00\x04utf8"
        b"\x018\x08\x00\x00\x00\x00\x00\x00\x00\x08\x019\x090123456789abcdef"
        b"\x63\x35\x36\x71",
        {
            "0": True,
            "1": False,
            "2": 2,
            "3": 3,
            "4": 4,
            "5": 5,
            "6": b"bytes",
            "7": "utf8",
            "8": 8,
            "9": b"0123456789abcdef",
        },
        b"",
    ),
    (
        b"\x00\x00\x00\x52\x00\x00\x00\x42\xbf\x23\x63\x7e"
        b"\x0d:message-type\x07\x00\x05error\x0b:error-code\x07\x00\x04code"
        b"\x0e:error-message\x07\x00\x07message\x6b\x6c\xea\x3d",
        {":message-type": "error", ":error-code": "code", ":error-message": "message"},
        b"",
    ),
]


def _botocore_messages(data: bytes) -> list:
    buffer = EventStreamBuffer()
    buffer.add_data(data)
    return list(buffer)


def _weather_events() -> list[tuple[str | None, object]]:
    codec = protocols.get("bedrock")
    return [(None, e) for e in codec.encode_stream(cases.THINKING_CALL).value]


# -- the layout, byte by byte ----------------------------------------------------------------


def test_a_frame_has_the_spec_layout_byte_by_byte():
    frame = encode_frame("messageStart", {"role": "assistant"})
    payload = b'{"role": "assistant"}'
    headers = (
        b"\x0b:event-type\x07\x00\x0cmessageStart"
        b"\x0d:content-type\x07\x00\x10application/json"
        b"\x0d:message-type\x07\x00\x05event"
    )
    total = 12 + len(headers) + len(payload) + 4
    assert frame[:8] == struct.pack(">II", total, len(headers))
    assert frame[8:12] == struct.pack(">I", zlib.crc32(frame[:8]))
    assert frame[12 : 12 + len(headers)] == headers
    assert frame[12 + len(headers) : -4] == payload
    assert frame[-4:] == struct.pack(">I", zlib.crc32(frame[:-4]))
    assert len(frame) == total


def test_the_empty_message_matches_botocores_vector():
    assert encode_message({}, b"") == BOTOCORE_VECTORS[0][0]


@pytest.mark.parametrize("data, headers, payload", BOTOCORE_VECTORS)
def test_our_reader_reads_botocores_test_vectors(data, headers, payload):
    assert decode_frames(data) == [(headers, payload)]


def test_our_encoder_writes_botocores_vectors_of_the_types_it_sends():
    # Strings (type 7) and headers in order: the result is byte-identical.
    assert (
        encode_message({"content-type": "application/json"}, b"{'foo':'bar'}")
        == (BOTOCORE_VECTORS[3][0])
    )
    assert encode_error("code", "message") == BOTOCORE_VECTORS[5][0]
    # Integers beyond 32 bits go out as a long (type 5) and come back whole.
    big = encode_message({"long": -(2**40)}, b"")
    assert big[12 + 5] == 5
    assert decode_frames(big) == [({"long": -(2**40)}, b"")]


# -- botocore reads what we write ------------------------------------------------------------


def test_botocore_reads_every_frame_of_a_converse_stream():
    frames = list(stream_frames(_weather_events()))
    messages = _botocore_messages(b"".join(frames))
    assert len(messages) == len(frames)
    sent = [e for _, e in _weather_events()]
    for message, event in zip(messages, sent, strict=True):
        ((name, payload),) = event.items()
        assert message.headers == {
            ":event-type": name,
            ":content-type": "application/json",
            ":message-type": "event",
        }
        assert json.loads(message.payload) == payload


class _Raw:
    """A response body as botocore's HTTP layer hands it to the parser."""

    def __init__(self, chunks: list[bytes]):
        self.chunks = chunks

    def stream(self):
        yield from self.chunks

    def close(self):
        pass


def _converse_stream(chunks: list[bytes]) -> EventStream:
    """What ``client.converse_stream(...)["stream"]`` is, parsed by botocore's own parser
    for the ConverseStream output shape from ``chunks`` of a 200 response."""
    output = get_session().get_service_model("bedrock-runtime")
    shape = output.operation_model("ConverseStream").output_shape
    response = {
        "status_code": 200,
        "headers": {"content-type": CONTENT_TYPE},
        "body": _Raw(chunks),
        "context": {"operation_name": "ConverseStream"},
    }
    stream = create_parser("rest-json").parse(response, shape)["stream"]
    assert isinstance(stream, EventStream)
    return stream


def test_botocores_converse_stream_parser_yields_the_events_we_sent():
    # Cut into 7-byte chunks: a reader must wait for whole frames.
    data = b"".join(stream_frames(_weather_events()))
    chunks = [data[i : i + 7] for i in range(0, len(data), 7)]
    assert list(_converse_stream(chunks)) == [e for _, e in _weather_events()]


def test_botocore_raises_the_exception_event_we_send():
    frame = encode_exception("throttlingException", {"message": "slow down"})
    with pytest.raises(BotocoreStreamError, match="slow down"):
        list(_converse_stream([frame]))


# -- our reader ------------------------------------------------------------------------------


def test_reader_takes_bytes_cut_anywhere():
    data = b"".join(stream_frames(_weather_events()))
    reader = FrameReader()
    got = []
    for i in range(len(data)):
        got += reader.feed(data[i : i + 1])
    assert [event_object(h, p) for h, p in got] == [e for _, e in _weather_events()]
    assert reader.pending == 0


def test_a_damaged_payload_is_named_by_its_message_crc():
    frames = list(stream_frames(_weather_events()))
    bad = bytearray(frames[1])
    bad[-6] ^= 0xFF  # inside the payload
    with pytest.raises(EventStreamError, match=r"message 1: message CRC mismatch \(sent 0x"):
        decode_frames(frames[0] + bytes(bad))


def test_a_damaged_length_is_named_by_its_prelude_crc():
    bad = bytearray(encode_frame("messageStop", {"stopReason": "end_turn"}))
    bad[2] ^= 0x01
    with pytest.raises(EventStreamError, match="message 0: prelude CRC mismatch"):
        decode_frames(bytes(bad))


def test_a_cut_stream_says_how_many_bytes_are_left_over():
    frame = encode_frame("messageStop", {"stopReason": "end_turn"})
    with pytest.raises(EventStreamError, match=r"message 1 is cut short: 5 bytes left over"):
        decode_frames(frame + frame[:5])


def test_a_duplicate_header_is_named():
    # botocore's DUPLICATE_HEADER vector.
    data = (
        b"\x00\x00\x00\x24\x00\x00\x00\x14\x4b\xb9\x82\xd0"
        b"\x04test\x04asdf\x04test\x04asdf\xf3\xf4\x75\x63"
    )
    with pytest.raises(EventStreamError, match="header 'test' appears twice"):
        decode_frames(data)


def test_lengths_beyond_the_limits_are_refused_without_waiting():
    prelude = struct.pack(">II", 0x7FFFFFFF, 0)
    data = prelude + struct.pack(">I", zlib.crc32(prelude))
    with pytest.raises(EventStreamError, match="payload over"):
        FrameReader().feed(data)


def test_events_exceptions_and_errors_become_one_member_objects():
    (event,) = decode_frames(encode_frame("metadata", {"usage": {"inputTokens": 3}}))
    assert event_object(*event) == {"metadata": {"usage": {"inputTokens": 3}}}
    (exc,) = decode_frames(encode_exception("validationException", {"message": "no"}))
    assert event_object(*exc) == {"validationException": {"message": "no"}}
    (err,) = decode_frames(encode_error("InternalFailure", "broke"))
    assert event_object(*err) == {"InternalFailure": {"message": "broke"}}
    (text,) = decode_frames(encode_frame("contentBlockDelta", "{not json"))
    assert event_object(*text) == "{not json"


def test_the_emulators_fault_events_are_framed():
    # A stream failure is an exception message; a malformed event is a delta of broken text.
    frames = list(stream_frames([(None, {"internalServerException": {"message": "x"}})]))
    assert decode_frames(frames[0])[0][0][":message-type"] == "exception"
    (broken,) = stream_frames([(None, "{not json")])
    headers, payload = decode_frames(broken)[0]
    assert headers[":event-type"] == "contentBlockDelta" and payload == b"{not json"


def test_bedrocks_facts_declare_the_framer_and_its_content_type():
    facts = protocols.facts("bedrock")
    assert facts.stream_framing == "event-stream"
    assert facts.stream_frames is stream_frames
    assert facts.stream_content_type == CONTENT_TYPE == "application/vnd.amazon.eventstream"
    others = [n for n in protocols.PROTOCOLS if n != "bedrock"]
    assert all(protocols.facts(n).stream_frames is None for n in others)
