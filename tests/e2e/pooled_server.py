"""``python -m streamlit`` for tests/e2e/test_resources.py, in the same process (its pid is the
server's), with the thread pools Streamlit and AnyIO keep for the process itself made
predictable, so that the test can count the server's threads without waiting them out:

- AnyIO's worker pool (Starlette serves files through it) lets an idle worker go after
  ``FLOWDEBUG_TEST_ANYIO_IDLE`` seconds instead of 10, when the pool is next used;
- Streamlit's pool that polls its config files (up to four threads, never let go) is started
  at its full size, instead of growing by a thread whenever two polls happen to overlap (which
  a loaded machine makes likely), so that it never grows while the test counts.

Neither pool belongs to a browser session; the app itself runs unchanged.

    python -m tests.e2e.pooled_server run serve.py --server.port ...
"""

from __future__ import annotations

import os
import runpy
import sys
import threading

from anyio._backends._asyncio import WorkerThread
from streamlit.watcher.polling_path_watcher import PollingPathWatcher


def main() -> None:
    WorkerThread.MAX_IDLE_TIME = float(os.environ.get("FLOWDEBUG_TEST_ANYIO_IDLE", "10"))
    pool = PollingPathWatcher._executor
    size = pool._max_workers
    all_started = threading.Barrier(size + 1)
    for _ in range(size):
        pool.submit(all_started.wait, 30)  # each holds a thread of its own until all are there
    all_started.wait(30)
    sys.argv = ["streamlit", *sys.argv[1:]]
    runpy.run_module("streamlit", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
