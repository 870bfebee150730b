"""Every real payload, read and written to every protocol, its own included, validates
against the target SDK's types (issue 31 item 2).

Writing a payload back to its own vendor keeps the vendor's fields the canonical form has no
place for; those the SDK's types accept as extras are allowed by ``tests/sdkcheck.py``
(``CHAT_EXTENSIONS``, ``RESPONSES_EXTENSIONS``, Bedrock's ``botocheck.EXTENSIONS``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from flowdebug.protocols import PROTOCOLS
from flowdebug.protocols.convert import decode, encode
from tests.paths import REAL
from tests.sdkcheck import validate_wire

SOURCES = sorted(p.name for p in REAL.glob("*.json") if not p.name.startswith("mcp."))
TARGETS = [t for t in PROTOCOLS if t != "mcp"]  # MCP transcripts: tests/protocols/mcp/test_mcp.py

# Real payloads the SDK's own types reject, and why: written back to their vendor, the same
# events fail and no other.
SOURCE_REJECTED = {
    # The API sends web_search_call sources of type "api" ({"type": "api", "name":
    # "oai-weather"}); openai 3.57's ActionSearchSource has only "url".
    "openai-responses.stream.pydantic-ai-cassette-web-search.json",
}


def _failing_events(payload: list[dict[str, Any]]) -> list[int]:
    from openai.types.responses import ResponseStreamEvent

    adapter = TypeAdapter(ResponseStreamEvent)
    failing = []
    for i, event in enumerate(payload):
        try:
            adapter.validate_python(event)
        except ValidationError:
            failing.append(i)
    return failing


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", SOURCES)
def test_every_real_payload_converts_to_every_protocol_as_its_sdk_accepts(
    name: str, target: str
) -> None:
    source = json.loads((REAL / name).read_text())
    decoded = decode(source)
    out, _ = encode(decoded, target)
    if name in SOURCE_REJECTED and target == name.split(".")[0]:
        failing = {out[i]["type"] for i in _failing_events(out)}
        assert failing == {source[i]["type"] for i in _failing_events(source)}
        return
    validate_wire(target, decoded.kind, out)
