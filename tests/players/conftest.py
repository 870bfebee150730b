"""The servers the players' tests call: the internal service the reach tests aim at, started
once a module (a uvicorn server takes a fifth of a second to stop, which 87 tests paid each),
and a server of recorded vendor answers that notes what it heard."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.players.services import Service, internal_answer
from tests.recorded_server import RecordedServer


@pytest.fixture(scope="module")
def internal_service() -> Iterator[Service]:
    with Service(internal_answer) as service:
        yield service


@pytest.fixture
def internal(internal_service: Service) -> Service:
    """An internal service on 127.0.0.1 that has heard no request yet."""
    internal_service.hits.clear()
    return internal_service


@pytest.fixture
def server() -> Iterator[RecordedServer]:
    """Recorded vendor answers on a free port, for one test: ``server.heard`` is every request's
    line, path and headers, ``server.received`` its body."""
    with RecordedServer() as s:
        yield s
