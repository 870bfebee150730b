"""What every test shares: the repository on ``sys.path``, the hypothesis profile
(tests/hypothesis_profiles.py), the local vendor-API emulator, and the markers `make test-fast`
leaves out (pyproject.toml declares them)."""

from __future__ import annotations

import gc
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

DEALT_FIRST = (
    "tests/store/test_store_packing.py",  # one property test of 28-39 s, one of 13 s
    "tests/repo/test_bench_smoke.py",  # the bench scripts, 8-14 s each
    "tests/exchange/test_fuzz.py",  # 8-20 s each
    "tests/engine/test_resources.py",
    "tests/mcp/test_mcp_client.py",
)
"""The modules whose tests take longest, each whole (its module fixtures made once), dealt
first under ``--dist loadgroup``: xdist deals a test's own unit in collection order once the
browser lanes are out, and the packing module, dealt last, ended `make test` 10-20 s after the
other two workers. Back to back on one machine (stop 43): the workers' last tests at 273, 275
and 284 s without this order (pytest 295.4 s), at 275, 275 and 276 s with it (286.8 s). A
stale entry only deals less evenly."""


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Iterator[object]:
    """Collecting imports every test module and the vendor SDKs they use, millions of objects
    that live as long as the process: the garbage collector stays off meanwhile (it walked
    them again and again: 1.2 s of each worker's 6-7 s of collection), and once they are built
    they leave its sight for good (``gc.freeze``), so that a full collection during the tests
    no longer walks them all (2.4 of the 21 s of CPU the codec tests took in one process;
    1.3 s frozen)."""
    gc.disable()
    try:
        return (yield)
    finally:
        gc.enable()
        gc.freeze()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test that needs PostgreSQL is marked ``postgres``, found by its fixtures, so that no
    test file has to remember the mark (the mark filter runs after this). Under ``--dist
    loadgroup`` (`make test`) the modules of :data:`DEALT_FIRST` come first."""
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        params = getattr(getattr(item, "callspec", None), "params", {})
        if names & POSTGRES_FIXTURES or params.get(STORE_PARAM) == "postgres":
            item.add_marker(pytest.mark.postgres)
    if getattr(config.option, "loadgroup", False):  # an xdist worker: each deals the same order
        first = {module: rank for rank, module in enumerate(DEALT_FIRST)}
        items.sort(key=lambda item: first.get(item.nodeid.split("::")[0], len(first)))


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
