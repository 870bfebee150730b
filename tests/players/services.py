"""Stand-ins for the servers a live player must or must not reach: a starlette app served by
uvicorn on 127.0.0.1 (an internal service, a redirector, an echoing upstream)."""

from __future__ import annotations

import threading
import time
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

INTERNAL = "INTERNAL-SECRET-DATA"
METHODS = ["GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH"]


class Service:
    """A starlette app served by uvicorn on 127.0.0.1 in a thread; ``hits`` lists the URL of
    every request it received."""

    def __init__(self, answer: Any):
        self.hits: list[str] = []

        async def anything(request: Request) -> Response:
            self.hits.append(str(request.url))
            return answer(request)

        app = Starlette(routes=[Route("/{path:path}", anything, methods=METHODS)])
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="error", lifespan="off")
        self.server = uvicorn.Server(config)

    def __enter__(self) -> Service:
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert time.monotonic() < deadline, "the service did not start"
            time.sleep(0.01)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(5)

    def base_url(self, protocol: str) -> str:
        return f"{self.url}/v1" if protocol.startswith("openai") else self.url


def internal_answer(request: Request) -> Response:
    return JSONResponse({"internal_only": INTERNAL})
