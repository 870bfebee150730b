"""Bedrock's SDK snippet: a boto3 script that replays the request with ``converse``, run here
against the local emulator through botocore (boto3's engine; boto3 itself is a thin session
over it and is not installed for the tests)."""

from __future__ import annotations

import sys
import types
from typing import Any

import botocore.session
import pytest

from flowdebug import protocols
from flowdebug.exchange.snippets import sdks, snippet
from tests import cases

SECRET = "sk-env-FAKE-0123456789abcdef"


@pytest.fixture
def boto3(monkeypatch, emulator):
    """A ``boto3`` whose ``client()`` is botocore's, as boto3's own is, with the script's
    environment: keys it must not print, and the endpoint variable pointing at the emulator."""
    module = types.ModuleType("boto3")

    def client(name: str, **kwargs: Any) -> Any:
        return botocore.session.Session().create_client(name, **kwargs)

    module.client = client  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "boto3", module)
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)  # bearer needs https
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDSNIPPET")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", emulator.base_url("bedrock"))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    return module


def _payload(conv) -> dict[str, Any]:
    return protocols.get("bedrock").encode_request(conv).value


def test_bedrock_declares_a_boto3_snippet():
    sdk = sdks()["bedrock"]
    assert sdk.package == "boto3" and sdk.model_in_url
    code = snippet("bedrock", _payload(cases.WEATHER_INITIAL), "weather")
    compile(code, "snippet.py", "exec")
    assert 'boto3.client("bedrock-runtime"' in code and "client.converse(" in code
    assert "MODEL = 'anthropic.claude-sonnet-4-20250514-v1:0'" in code
    assert "'toolConfig'" in code and "'toolSpec'" in code
    assert "export AWS_BEARER_TOKEN_BEDROCK=..." in code
    assert "AWS_ENDPOINT_URL_BEDROCK_RUNTIME points it at another endpoint" in code


def test_snippet_replays_the_request_through_converse(boto3, emulator, capsys):
    payload = _payload(cases.WEATHER_INITIAL)
    code = snippet("bedrock", payload, "weather", model="anthropic.nova-pro-v1:0")
    assert SECRET not in code
    exec(compile(code, "snippet.py", "exec"), {"__name__": "__main__"})
    sent = emulator.requests[-1]
    assert sent["path"] == "/model/anthropic.nova-pro-v1%3A0/converse"
    assert sent["body"] == payload
    out = capsys.readouterr().out
    assert '"stopReason": "tool_use"' in out and '"name": "get_weather"' in out


def test_snippet_sends_image_bytes_once_encoded(boto3, emulator, capsys):
    payload = _payload(cases.IMAGE_RESULT)
    exec(compile(snippet("bedrock", payload), "snippet.py", "exec"), {"__name__": "__main__"})
    assert emulator.requests[-1]["body"] == payload  # the base64 is not encoded a second time
    capsys.readouterr()
