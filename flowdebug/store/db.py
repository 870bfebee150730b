"""The two databases behind :mod:`flowdebug.store.sessions`: SQLite (a file) and PostgreSQL (a URL).

Both speak the same small SQL (``?`` placeholders, ``ON CONFLICT``, ``DOUBLE PRECISION``);
a :class:`Tx` hides the rest. A transaction borrows a connection from a small pool, so
browser sessions that save at once never share one. The schema is built by numbered
migration functions, recorded in ``flowdebug_migrations``; a database made by a newer
flowdebug is refused, not damaged.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from pathlib import Path
from typing import Any

from flowdebug.errors import UsageError
from flowdebug.store.errors import StoreError as StoreError  # where callers import it from


class Tx:
    """One transaction: run statements, fetch rows."""

    def __init__(self, cursor: Any, postgres: bool):
        self._cur = cursor
        self.postgres = postgres

    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s") if self.postgres else sql

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one statement; the number of rows it changed."""
        self._cur.execute(self._sql(sql), params)
        return self._cur.rowcount

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        rows = list(rows)
        if rows:
            self._cur.executemany(self._sql(sql), rows)

    def one(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        self._cur.execute(self._sql(sql), params)
        return self._cur.fetchone()

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        self._cur.execute(self._sql(sql), params)
        return list(self._cur.fetchall())

    def insert_items(self, rows: list[tuple[str, str, int, str, bytes | None]]) -> None:
        """Many item rows at once, (session, list, idx, body, zbody) each (PostgreSQL:
        ``COPY``, far faster than one INSERT each)."""
        if not rows:
            return
        if self.postgres:
            sql = "COPY flowdebug_items (session, list, idx, body, zbody) FROM STDIN"
            with self._cur.copy(sql) as cp:
                for row in rows:
                    cp.write_row(row)
        else:
            self._cur.executemany(
                "INSERT INTO flowdebug_items (session, list, idx, body, zbody)"
                " VALUES (?, ?, ?, ?, ?)",
                rows,
            )

    def insert_values(self, session_id: str, values: dict[str, str]) -> None:
        """A session's packed values (see :mod:`flowdebug.store.packing`); one already there
        is left as it is (its hash names its text)."""
        self.executemany(
            "INSERT INTO flowdebug_values (session, hash, body) VALUES (?, ?, ?)"
            " ON CONFLICT (session, hash) DO NOTHING",
            [(session_id, h, text) for h, text in values.items()],
        )

    @property
    def lock_row(self) -> str:
        """Appended to a SELECT that a writer then updates (SQLite locks the whole file)."""
        return " FOR UPDATE" if self.postgres else ""

    @property
    def share_row(self) -> str:
        return " FOR SHARE" if self.postgres else ""


# -- migrations: append, never edit one that shipped ----------------------------------------


def _m1_sessions(tx: Tx) -> None:
    tx.execute(
        """CREATE TABLE flowdebug_sessions (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            scenario TEXT,
            parent TEXT,
            created DOUBLE PRECISION NOT NULL,
            updated DOUBLE PRECISION NOT NULL,
            messages INTEGER NOT NULL DEFAULT 0,
            step INTEGER NOT NULL DEFAULT 0,
            status TEXT NOT NULL DEFAULT 'ready',
            revision INTEGER NOT NULL DEFAULT 0,
            head TEXT NOT NULL DEFAULT '{}',
            conversation TEXT NOT NULL DEFAULT '{}'
        )"""
    )
    # One row per message, trace event, execution and wire exchange: a step appends a few
    # rows instead of rewriting the whole session.
    tx.execute(
        """CREATE TABLE flowdebug_items (
            session TEXT NOT NULL REFERENCES flowdebug_sessions (id) ON DELETE CASCADE,
            list TEXT NOT NULL,
            idx INTEGER NOT NULL,
            body TEXT NOT NULL,
            PRIMARY KEY (session, list, idx)
        )"""
    )
    tx.execute("CREATE INDEX flowdebug_sessions_updated ON flowdebug_sessions (updated)")


def _m2_owner(tx: Tx) -> None:
    # On a shared server a session belongs to the browser that made it: this holds a hash of
    # that browser's secret (NULL: made outside shared mode, by the CLI or an older version).
    tx.execute("ALTER TABLE flowdebug_sessions ADD COLUMN owner TEXT")
    tx.execute("CREATE INDEX flowdebug_sessions_owner ON flowdebug_sessions (owner, updated)")


def _m3_values(tx: Tx) -> None:
    # A session's larger values stored once, by hash (flowdebug.store.packing): every live
    # exchange carried the whole history again, so sessions grew with the square of their
    # length. Existing rows are packed here.
    from flowdebug.store.packing import Packer

    tx.execute(
        """CREATE TABLE flowdebug_values (
            session TEXT NOT NULL REFERENCES flowdebug_sessions (id) ON DELETE CASCADE,
            hash TEXT NOT NULL,
            body TEXT NOT NULL,
            PRIMARY KEY (session, hash)
        )"""
    )
    for (session_id,) in tx.all("SELECT id FROM flowdebug_sessions ORDER BY id"):
        packer = Packer()
        rows = tx.all(
            "SELECT list, idx, body FROM flowdebug_items WHERE session = ?", (session_id,)
        )
        tx.executemany(
            "UPDATE flowdebug_items SET body = ? WHERE session = ? AND list = ? AND idx = ?",
            [(packer.pack(body), session_id, kind, idx) for kind, idx, body in rows],
        )
        tx.insert_values(session_id, packer.values)


def _m4_rooms(tx: Tx) -> None:
    # Rooms that attendees follow, and the questions asked in them (flowdebug.store.rooms).
    tx.execute(
        """CREATE TABLE flowdebug_rooms (
            code TEXT PRIMARY KEY,
            session TEXT NOT NULL REFERENCES flowdebug_sessions (id) ON DELETE CASCADE,
            owner TEXT,
            created DOUBLE PRECISION NOT NULL,
            expires DOUBLE PRECISION NOT NULL,
            closed DOUBLE PRECISION,
            revision INTEGER NOT NULL DEFAULT 0,
            beat INTEGER
        )"""
    )
    tx.execute("CREATE INDEX flowdebug_rooms_session ON flowdebug_rooms (session)")
    tx.execute(
        """CREATE TABLE flowdebug_questions (
            session TEXT NOT NULL REFERENCES flowdebug_sessions (id) ON DELETE CASCADE,
            idx INTEGER NOT NULL,
            body TEXT NOT NULL,
            PRIMARY KEY (session, idx)
        )"""
    )
    tx.execute(
        """CREATE TABLE flowdebug_answers (
            session TEXT NOT NULL REFERENCES flowdebug_sessions (id) ON DELETE CASCADE,
            question INTEGER NOT NULL,
            attendee TEXT NOT NULL,
            choice TEXT NOT NULL,
            PRIMARY KEY (session, question, attendee)
        )"""
    )


def _m5_compressed(tx: Tx) -> None:
    # Item rows deflated against their block's first rows (flowdebug.store.compress): the
    # bytes in zbody, body then empty. Rows already there stay text (zbody NULL).
    blob = "BYTEA" if tx.postgres else "BLOB"
    tx.execute(f"ALTER TABLE flowdebug_items ADD COLUMN zbody {blob}")


def _m6_undo(tx: Tx) -> None:
    # A session's undo history (flowdebug.store.undo): one row per state it can go back to,
    # each as what differs from the next newer one, so Undo works after a reload.
    blob = "BYTEA" if tx.postgres else "BLOB"
    tx.execute(
        f"""CREATE TABLE flowdebug_undo (
            session TEXT NOT NULL REFERENCES flowdebug_sessions (id) ON DELETE CASCADE,
            idx INTEGER NOT NULL,
            zbody {blob} NOT NULL,
            PRIMARY KEY (session, idx)
        )"""
    )


MIGRATIONS: list[Callable[[Tx], None]] = [
    _m1_sessions,
    _m2_owner,
    _m3_values,
    _m4_rooms,
    _m5_compressed,
    _m6_undo,
]
_PG_LOCK = 0x666C6F77  # advisory lock id: app servers starting together migrate one at a time


def migrate(db: Database, migrations: Sequence[Callable[[Tx], None]] = MIGRATIONS) -> int:
    """Bring the schema up to date; the version it is at afterwards."""
    with db.transaction(write=True) as tx:
        if tx.postgres:
            tx.execute("SELECT pg_advisory_xact_lock(?)", (_PG_LOCK,))
        tx.execute(
            "CREATE TABLE IF NOT EXISTS flowdebug_migrations ("
            "version INTEGER PRIMARY KEY, applied DOUBLE PRECISION NOT NULL)"
        )
        row = tx.one("SELECT MAX(version) FROM flowdebug_migrations")
        current = (row[0] if row else None) or 0
        if current > len(migrations):
            raise StoreError(
                f"the session database {db.label} has schema version {current}, made by a "
                f"newer flowdebug (this one knows {len(migrations)}); upgrade flowdebug or "
                "point FLOWDEBUG_DB at another database"
            )
        for version in range(current + 1, len(migrations) + 1):
            migrations[version - 1](tx)
            tx.execute(
                "INSERT INTO flowdebug_migrations (version, applied) VALUES (?, ?)",
                (version, time.time()),
            )
        return len(migrations)


# -- the databases --------------------------------------------------------------------------


class Database:
    """Transactions over a small pool of connections: a thread borrows one for the length of a
    transaction, so threads never share one at once, and the threads a server starts and
    drops (Streamlit runs each rerun in a new one) leave no connection behind."""

    postgres = False
    label = ""
    POOL = 4  # idle connections kept open

    def __init__(self) -> None:
        self._idle: list[Any] = []
        self._lock = threading.Lock()

    def _connect(self) -> Any:
        raise NotImplementedError

    def _reusable(self, conn: Any) -> bool:
        raise NotImplementedError

    @contextmanager
    def _borrow(self) -> Iterator[Any]:
        with self._lock:
            conn = self._idle.pop() if self._idle else None
        conn = conn or self._connect()
        try:
            yield conn
        finally:
            with self._lock:
                keep = len(self._idle) < self.POOL and self._reusable(conn)
                if keep:
                    self._idle.append(conn)
            if not keep:
                with suppress(Exception):
                    conn.close()

    def transaction(self, write: bool = False) -> AbstractContextManager[Tx]:
        """A transaction on a borrowed connection; ``write`` when it will change rows."""
        raise NotImplementedError

    def close(self) -> None:
        with self._lock:
            conns, self._idle = self._idle, []
        for conn in conns:
            with suppress(Exception):  # best effort: the process may be on its way out
                conn.close()


class SqliteDatabase(Database):
    """A SQLite file in WAL mode: readers never wait for the writer, and a process killed in
    the middle of a commit leaves the last committed state (``synchronous=NORMAL`` is safe
    against a crashed process; only a power cut may lose the last commits)."""

    def __init__(self, path: Path):
        super().__init__()
        self.path = path
        self.label = str(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StoreError(f"cannot create the folder of {path}: {e}") from None

    def _connect(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(
                self.path, timeout=30.0, isolation_level=None, check_same_thread=False
            )
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
        except sqlite3.Error as e:
            raise StoreError(f"cannot open the session database {self.path}: {e}") from None
        return conn

    def _reusable(self, conn: sqlite3.Connection) -> bool:
        return not conn.in_transaction

    @contextmanager
    def transaction(self, write: bool = False) -> Iterator[Tx]:
        with self._borrow() as conn:
            try:
                # IMMEDIATE takes the write lock up front: two writers never deadlock upgrading.
                conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            except sqlite3.Error as e:
                raise StoreError(f"session database {self.path}: {e}") from None
            try:
                yield Tx(conn.cursor(), postgres=False)
                conn.execute("COMMIT")
            except BaseException as e:
                with suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
                if isinstance(e, sqlite3.Error):
                    raise StoreError(f"session database {self.path}: {e}") from None
                raise


class PostgresDatabase(Database):
    """PostgreSQL through psycopg 3 (``pip install 'flowdebug[postgres]'``), for a shared
    deployment with several app servers."""

    postgres = True

    def __init__(self, url: str):
        super().__init__()
        try:
            import psycopg
        except ImportError:
            raise UsageError(
                "a PostgreSQL session store needs psycopg: pip install 'flowdebug[postgres]'"
            ) from None
        self._psycopg = psycopg
        self.url = url
        self.label = redact_url(url)

    def _connect(self) -> Any:
        try:
            return self._psycopg.connect(self.url, autocommit=True, connect_timeout=10)
        except self._psycopg.Error as e:
            raise StoreError(f"cannot reach the session database {self.label}: {e}") from None

    def _reusable(self, conn: Any) -> bool:
        idle = self._psycopg.pq.TransactionStatus.IDLE
        return not (conn.closed or conn.broken) and conn.info.transaction_status == idle

    @contextmanager
    def transaction(self, write: bool = False) -> Iterator[Tx]:
        with self._borrow() as conn:
            try:
                with conn.transaction(), conn.cursor() as cur:
                    yield Tx(cur, postgres=True)
            except self._psycopg.Error as e:
                raise StoreError(f"session database {self.label}: {e}") from None


def redact_url(url: str) -> str:
    """``url`` without its password, for messages."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    user = f"{parts.username}:***@" if parts.username else ":***@"
    port = f":{parts.port}" if parts.port else ""
    return urlunsplit(parts._replace(netloc=f"{user}{host}{port}"))


def default_path() -> Path:
    """``$XDG_DATA_HOME/flowdebug/sessions.db``, else ``~/.local/share/flowdebug/sessions.db``."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "flowdebug" / "sessions.db"


def open_database(url: str) -> Database:
    """A database for ``url``: ``postgresql://…``, ``sqlite:///path``, or a file path."""
    if url.startswith(("postgresql://", "postgres://")):
        return PostgresDatabase(url)
    if url.startswith("sqlite:"):
        rest = url.removeprefix("sqlite:")
        path = rest[2:] if rest.startswith("//") else rest
        if not path or path == "/":
            raise UsageError(f"{url!r}: name the file, e.g. sqlite:///home/me/sessions.db")
        return SqliteDatabase(Path(path).expanduser())
    if "://" in url:
        scheme = url.split("://", 1)[0]
        raise UsageError(
            f"unknown session database {scheme}://; use a file path, sqlite:///path or "
            "postgresql://user@host/db"
        )
    return SqliteDatabase(Path(url).expanduser())
