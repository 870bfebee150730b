"""The recording proxy served: :class:`RecordingProxy`, on the emulator's serving pieces."""

from __future__ import annotations

from collections.abc import Mapping

from starlette.applications import Starlette

from flowdebug.emulator.serving import AsgiServer
from flowdebug.protocols import facts
from flowdebug.record.proxy import create_app
from flowdebug.record.sessions import Recorder

MAX_BODY = 32 << 20  # bytes of one request: the largest the vendors take (Anthropic's 32 MB)


class RecordingProxy(AsgiServer):
    """``flowdebug record``: forwards the agent's model calls (and, with ``mcp_url``, its MCP
    server's traffic under ``/mcp``) and records them into ``recorder``. ``with
    RecordingProxy(...) as proxy:`` serves on a free port in a background thread;
    :meth:`base_url` is what the agent's SDK is given. ``upstreams`` (the forward proxy's,
    :mod:`flowdebug.record.forward`): the upstream of each host, named by a request's Host;
    a request for any other host is refused (421)."""

    what = "recording proxy"

    def __init__(
        self,
        recorder: Recorder,
        *,
        upstream: str | None = None,
        upstreams: Mapping[str, str] | None = None,
        mcp_url: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        max_body: int = MAX_BODY,
    ):
        self.recorder = recorder
        self.upstream = upstream
        self.upstreams = upstreams
        self.mcp_url = mcp_url
        self.max_body = max_body
        super().__init__(host=host, port=port)

    def app(self) -> Starlette:
        return create_app(self)

    def base_url(self, protocol: str) -> str:
        """The SDK ``base_url`` for ``protocol``: this proxy, with the path the vendor's own
        base URL ends in."""
        return self.url + facts(protocol).base_path
