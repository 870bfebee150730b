"""What every test shares: the repository on ``sys.path``, the hypothesis profile
(tests/hypothesis_profiles.py), the local vendor-API emulator, and the markers `make test-fast`
leaves out (pyproject.toml declares them)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from flowdebug.emulator.server import Emulator

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from hypothesis import settings  # noqa: E402

from tests import clock  # noqa: E402
from tests.hypothesis_profiles import profile  # noqa: E402

settings.load_profile(profile())
clock.install()

# The fixtures that start a PostgreSQL server (tests/pgserver.py), and the store fixture whose
# "postgres" parameter asks one for a database.
POSTGRES_FIXTURES = {"pg_server", "pg"}
STORE_PARAM = "store_url"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that needs PostgreSQL is marked ``postgres``, found by its fixtures, so that no
    test file has to remember the mark (the mark filter runs after this)."""
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        params = getattr(getattr(item, "callspec", None), "params", {})
        if names & POSTGRES_FIXTURES or params.get(STORE_PARAM) == "postgres":
            item.add_marker(pytest.mark.postgres)


@pytest.fixture(autouse=True)
def tool_clock(request: pytest.FixtureRequest) -> Iterator[None]:
    """A call that sleeps past its deadline times out at once (tests/clock.py, installed for
    the run), unless the test is marked ``real_clock``."""
    clock.real = request.node.get_closest_marker("real_clock") is not None
    yield
    clock.real = False


@pytest.fixture(scope="module")
def emulator(request: pytest.FixtureRequest) -> Iterator[Emulator]:
    """The vendor-API emulator on a free port, in this process, for the module; a module that
    needs other settings names them in a module-level ``EMULATOR`` dict (Emulator's keywords)."""
    from flowdebug.emulator.server import Emulator

    with Emulator(**getattr(request.module, "EMULATOR", {})) as emu:
        yield emu
