"""``python -m streamlit`` with ``gc.freeze()`` after the app's imports (``--gc freeze``).

Imports every module of the packages named in ``$FLOWDEBUG_BENCH_PRELOAD`` (comma-separated,
e.g. ``flowdebug``) and the vendor SDKs they pull in, freezes what that built (a full
collection then skips it), and hands over to Streamlit's own command line. This is what the
few lines proposed for ``app.py`` do at its first run, done here so the benchmark can measure
any checkout, including one without them.
"""

from __future__ import annotations

import gc
import importlib
import os
import pkgutil
import sys


def preload(packages: list[str]) -> int:
    """Import every module under ``packages``; how many were imported."""
    count = 0
    for name in packages:
        package = importlib.import_module(name)
        count += 1
        for info in pkgutil.walk_packages(package.__path__, prefix=f"{name}."):
            if info.name.endswith(".__main__"):  # a command line: it would run, not load
                continue
            try:
                importlib.import_module(info.name)
                count += 1
            except Exception:  # a module that needs what this host lacks: not frozen, fine
                continue
    return count


def main() -> None:
    wanted = [p for p in os.environ.get("FLOWDEBUG_BENCH_PRELOAD", "").split(",") if p]
    import streamlit.web.cli  # noqa: F401  (Streamlit's own modules are frozen too)

    preload(wanted)
    gc.collect()
    gc.freeze()
    from streamlit.web.cli import main as streamlit_main

    sys.argv = ["streamlit", *sys.argv[1:]]
    streamlit_main(prog_name="streamlit")


if __name__ == "__main__":
    main()
