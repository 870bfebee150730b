"""A throwaway PostgreSQL server for the store's tests (Debian's ``postgresql`` package).

``start()`` finds ``initdb`` / ``pg_ctl`` (installing the package with apt-get when they are
missing and we are root), initialises a cluster in a fresh temporary folder, and starts it
on a free loopback port with trust authentication and no fsync; ``stop()`` removes it all.
PostgreSQL refuses to run as root, so as root the server runs as the ``postgres`` user.

Run as a script to get a server for ``bench/store.py``:

    .venv/bin/python tests/pgserver.py     # prints the URL; Enter stops it
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path


class Unavailable(Exception):
    """No PostgreSQL server can be had here."""


def _find_bin() -> Path | None:
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).resolve().parent
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    return versions[-1].parent if versions else None


def ensure_installed() -> Path:
    """The folder holding ``initdb`` and ``pg_ctl``, installing Debian's package if needed."""
    found = _find_bin()
    if found:
        return found
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        raise Unavailable("PostgreSQL is not installed (apt-get install postgresql)")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (
        ["apt-get", "update", "-qq"],
        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "postgresql"],
    ):
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            raise Unavailable(f"{' '.join(cmd)} failed: {proc.stderr.strip()[-500:]}")
    found = _find_bin()
    if not found:
        raise Unavailable("apt-get installed postgresql but initdb is not to be found")
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class PgServer:
    root: Path
    port: int
    bin: Path
    user: str | None  # the OS user the server runs as (None: us)

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def database_url(self, name: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    def _run(self, *args: str) -> None:
        cmd = [str(self.bin / args[0]), *args[1:]]
        if self.user:
            cmd = ["runuser", "-u", self.user, "--", *cmd]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=self.root)
        if proc.returncode != 0:
            log = self.root / "server.log"
            tail = log.read_text(errors="replace")[-800:] if log.exists() else ""
            raise Unavailable(f"{args[0]} failed: {proc.stderr.strip()[-800:]}\n{tail}")

    def create_database(self, name: str) -> str:
        """A new empty database; its URL."""
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.database_url(name)

    def stop(self) -> None:
        with suppress(Unavailable):
            self._run("pg_ctl", "-D", str(self.root / "data"), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)


def start() -> PgServer:
    """A running server on a free loopback port."""
    bindir = ensure_installed()
    user = None
    root = Path(tempfile.mkdtemp(prefix="flowdebug-pg-"))
    if os.geteuid() == 0:
        try:
            entry = pwd.getpwnam("postgres")
        except KeyError:
            raise Unavailable("running as root and there is no postgres user") from None
        user = "postgres"
        os.chown(root, entry.pw_uid, entry.pw_gid)
    server = PgServer(root=root, port=_free_port(), bin=bindir, user=user)
    data = str(root / "data")
    try:
        server._run(
            "initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8",
            "--no-sync", "--no-instructions",
        )  # fmt: skip
        options = (
            f"-p {server.port} -c listen_addresses=127.0.0.1 -k {root} "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        )
        server._run(
            "pg_ctl", "-D", data, "-l", str(root / "server.log"), "-o", options, "-w", "-t", "30",
            "start",
        )  # fmt: skip
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    return server


def start_or_skip() -> PgServer:
    """:func:`start` for a test fixture: the test is skipped, saying why, when psycopg or a
    PostgreSQL server cannot be had here."""
    import pytest

    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg is not installed (pip install 'flowdebug[postgres]')")
    try:
        return start()
    except Unavailable as e:
        pytest.skip(f"no PostgreSQL server can be had here: {e}")


if __name__ == "__main__":
    srv = start()
    print(srv.url, flush=True)
    try:
        input()
    finally:
        srv.stop()
