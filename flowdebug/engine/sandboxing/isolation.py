"""How far a code handler's child is kept from the server: one of three modes, chosen once.

- ``bwrap`` (bubblewrap is installed and works): the child runs in fresh pid, network, IPC
  and UTS namespaces, sees only read-only copies of what Python needs (``/usr``, the
  interpreter's prefix, the virtualenv), a ``/proc`` of its own namespace, an empty private
  ``/tmp`` (its home, size-capped) and no network at all. When the server runs as root the
  child also drops to a user id of its own. The server's files, environment, memory and
  processes are out of its sight; killing bubblewrap ends its pid namespace and everything
  in it.
- ``user`` (root, no bubblewrap): the child runs as a fresh unprivileged user id, one per
  call, with no supplementary groups and ``no_new_privs`` (a set-uid program cannot make it
  root again). The server's ``/proc/<pid>/environ`` and memory, and files only root may read
  (``/root``, the default sessions database under it, ``~/.ssh``), are closed to it. It has no
  network when the kernel lets it make a user namespace (the probe says). It still reads what
  any user may read. Every process of that user id is killed when the call ends.
- ``none`` (neither): the child runs as the server's user. It can read what the server's
  user can (its files, ``/proc/<server>/environ``); only the scrubbed environment, the
  resource limits and the kill of its process tree hold. A shared server refuses code
  handlers in this mode unless the host says ``FLOWDEBUG_SHARED_CODE_HANDLERS=unisolated``.

``FLOWDEBUG_CODE_ISOLATION`` (``auto``, the default, or ``bwrap``, ``user``, ``none``) forces
one; a forced mode this machine cannot give makes every code handler an error saying why.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal

from flowdebug import hosting

ISOLATION_ENV = "FLOWDEBUG_CODE_ISOLATION"
Mode = Literal["bwrap", "user", "none"]
MODES: tuple[Mode, ...] = ("bwrap", "user", "none")
# Per-call user ids come from here: far above any account or container's subordinate range.
UID_BASE, UID_SPAN = 0x60000000, 1 << 20
# unshare(2) flags: a user namespace (so an unprivileged process may) and a network one.
NEW_NET = 0x10000000 | 0x40000000
TMP_BYTES = 64 * 1024 * 1024  # the private /tmp a bubblewrapped child writes into
# Python's minimum set for the child: what the probe imports to prove the mode works.
_PROBE_IMPORTS = "import ctypes, json, resource, faulthandler, traceback, linecache"

_uid_lock = threading.Lock()
_uids: set[int] = set()


@dataclass(frozen=True)
class Resolution:
    """The mode in force. ``error`` (when not empty) says why the asked mode cannot run here;
    ``python`` is the interpreter the child runs; ``network`` whether the child has none."""

    mode: Mode
    python: str = sys.executable
    network_isolated: bool = False
    error: str = ""
    bwrap: str = ""


@dataclass
class Plan:
    """How to start one child: its command, the ``Popen`` extras, the user id it runs as
    (None: the server's), where its home is as it sees it, and what the launcher must do."""

    mode: Mode
    argv: list[str]
    uid: int | None
    home: str
    popen: dict[str, Any] = field(default_factory=dict)
    drop_to: int | None = None  # the launcher itself drops to this uid (bwrap as root)
    unshare_net: bool = False  # the launcher makes its own network namespace (user mode)
    sweep_all: bool = False  # every process the launcher may signal is its own


def requested() -> str:
    """The mode the host asked for (``auto`` unless ``FLOWDEBUG_CODE_ISOLATION`` says)."""
    return os.environ.get(ISOLATION_ENV, "auto").strip().lower() or "auto"


def current() -> Resolution:
    """The mode in force for the next call (probed once per asked mode)."""
    return _resolve(requested())


@cache
def _resolve(asked: str) -> Resolution:
    if asked not in ("auto", *MODES):
        known = "auto, bwrap, user, none"
        return Resolution("none", error=f"{ISOLATION_ENV}={asked!r} is none of {known}")
    if os.name != "posix" or not os.path.isdir("/proc"):
        if asked in ("auto", "none"):
            return Resolution("none")
        return Resolution("none", error=f"isolation {asked!r} needs Linux")
    reasons = []
    if asked in ("auto", "bwrap"):
        found = _probe_bwrap()
        if isinstance(found, Resolution):
            return found
        reasons.append(found)
        if asked == "bwrap":
            return Resolution("bwrap", error=found)
    if asked in ("auto", "user"):
        found_user = _probe_user()
        if isinstance(found_user, Resolution):
            return found_user
        if asked == "user":
            return Resolution("user", error=found_user)
    return Resolution("none")


def _probe(argv: list[str], **popen: Any) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(
            argv, capture_output=True, text=True, timeout=20, cwd="/", env={}, **popen
        )
    except (OSError, subprocess.SubprocessError):
        return None


def _probe_bwrap() -> Resolution | str:
    """The bwrap mode when bubblewrap can really start a child here; else why not."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap is not installed (Debian: apt-get install bubblewrap)"
    uid = UID_BASE - 1 if os.geteuid() == 0 else None
    drop = f"import os; os.setgroups([]); os.setgid({uid}); os.setuid({uid}); " if uid else ""
    code = f"{drop}{_PROBE_IMPORTS}; import socket; print('ok')"
    done = _probe([*_bwrap_argv(bwrap, sys.executable), "-I", "-c", code])
    if done is None or done.returncode != 0 or "ok" not in done.stdout:
        detail = (done.stderr.strip().splitlines() or ["?"])[-1] if done else "did not start"
        return f"bubblewrap cannot start a sandbox here ({detail})"
    return Resolution("bwrap", python=sys.executable, network_isolated=True, bwrap=bwrap)


def _probe_user() -> Resolution | str:
    """The user mode when the server is root and an unprivileged user can run a Python of
    this version; else why not."""
    if os.geteuid() != 0:
        return "the server does not run as root, so it cannot start a child as another user"
    uid = UID_BASE - 1
    code = (
        f"{_PROBE_IMPORTS}\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        f"print('ok no-net' if libc.unshare({NEW_NET}) == 0 else 'ok shared-net')\n"
    )
    for python in _interpreters():
        done = _probe([python, "-I", "-c", code], user=uid, group=uid, extra_groups=[])
        if done is not None and done.returncode == 0 and "ok" in done.stdout:
            return Resolution("user", python=python, network_isolated="no-net" in done.stdout)
    return (
        f"no Python {sys.version_info.major}.{sys.version_info.minor} that an unprivileged "
        "user may run (the server's is in a directory only root may enter)"
    )


def _interpreters() -> list[str]:
    """This Python first, then others of the same version another user might reach."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    found = [sys.executable, getattr(sys, "_base_executable", sys.executable)]
    found += [os.path.join(d, version) for d in ("/usr/local/bin", "/usr/bin", "/bin")]
    seen: list[str] = []
    for path in found:
        if path and os.path.isfile(path) and path not in seen:
            seen.append(path)
    return seen


def _bwrap_argv(bwrap: str, python: str) -> list[str]:
    """bubblewrap's command up to (and including) the interpreter."""
    argv = [
        bwrap,
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--hostname",
        "flowdebug-sandbox",
        "--die-with-parent",
        "--new-session",
    ]
    if os.geteuid() == 0:
        # Root's bubblewrap drops every capability; the launcher keeps these two only to
        # become its own user before any of the person's code runs.
        argv += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    binds = _python_roots(python)
    made: set[str] = set()
    for root in binds:  # each parent a directory anyone may enter, not bubblewrap's 0700
        parts = root.strip("/").split("/")[:-1]
        for i in range(1, len(parts) + 1):
            parent = "/" + "/".join(parts[:i])
            if parent not in made and not any(_under(parent, b) for b in binds):
                made.add(parent)
                argv += ["--perms", "0755", "--dir", parent]
    for root in binds:
        argv += ["--ro-bind", root, root]
    for top in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = "/" + top
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path) and path not in binds:
            argv += ["--ro-bind", path, path]
    for etc in ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime"):
        argv += ["--ro-bind-try", etc, etc]
    argv += ["--proc", "/proc", "--dev", "/dev"]
    argv += ["--perms", "1777", "--size", str(TMP_BYTES), "--tmpfs", "/tmp", "--chdir", "/tmp"]
    return [*argv, "--", python]


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _python_roots(python: str) -> list[str]:
    """The directories the interpreter needs, outermost only: ``/usr``, its prefix, the
    virtualenv (a symlinked interpreter's target directory too)."""
    wanted = ["/usr", sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    wanted += [os.path.dirname(python), os.path.dirname(os.path.realpath(python))]
    real = {os.path.realpath(p) for p in wanted if p} | {p for p in wanted if p}
    roots = sorted(p for p in real if os.path.isdir(p) and p != "/")
    return [p for p in roots if not any(r != p and _under(p, r) for r in roots)]


def new_uid() -> int:
    """A user id no other call holds, for one call's child."""
    with _uid_lock:
        while True:
            uid = UID_BASE + random.randrange(UID_SPAN)
            if uid not in _uids:
                _uids.add(uid)
                return uid


def release_uid(uid: int | None) -> None:
    """Give back a call's user id once nothing of it is left."""
    if uid is not None:
        with _uid_lock:
            _uids.discard(uid)


def plan(resolution: Resolution, launcher: list[str], workdir: str) -> Plan:
    """How to start one child in ``resolution``'s mode: ``launcher`` is the interpreter's
    arguments after its path, ``workdir`` the call's host directory (its home outside bwrap)."""
    root = os.geteuid() == 0
    if resolution.mode == "bwrap":
        uid = new_uid() if root else None
        argv = [*_bwrap_argv(resolution.bwrap, resolution.python), *launcher]
        return Plan("bwrap", argv, uid, "/tmp", drop_to=uid, sweep_all=True)
    if resolution.mode == "user":
        uid = new_uid()
        os.chown(workdir, uid, uid)
        popen = {"user": uid, "group": uid, "extra_groups": []}
        argv = [resolution.python, *launcher]
        unshare = resolution.network_isolated
        return Plan("user", argv, uid, workdir, popen, unshare_net=unshare, sweep_all=True)
    return Plan("none", [resolution.python, *launcher], None, workdir)


def shared_code_allowed() -> bool:
    """May a shared server run code handlers? Only when the host opted in
    (``FLOWDEBUG_SHARED_CODE_HANDLERS``): ``1`` where the child is isolated (bwrap or user
    mode), ``unisolated`` in any mode."""
    value = os.environ.get(hosting.SHARED_CODE_ENV, "").strip().lower()
    if value == "unisolated":
        return True
    resolution = current()
    isolated = resolution.mode in ("bwrap", "user") and not resolution.error
    return value in ("1", "true", "yes", "on") and isolated


def describe(resolution: Resolution | None = None) -> str:
    """One line for the host: the mode in force and what it guarantees."""
    r = resolution or current()
    if r.error:
        return f"code handlers: isolation {r.mode!r} unavailable: {r.error}"
    what = {
        "bwrap": "bubblewrap: own pid/network/IPC namespaces, read-only system, private /tmp",
        "user": "a user id of its own per call"
        + (", no network" if r.network_isolated else " (network shared: no user namespaces)"),
        "none": "the server's own user: not isolated from the server's files",
    }[r.mode]
    return f"code handlers: {what}"


def tree(child: int, mark: str, uid: int | None = None) -> list[int]:
    """Live processes (not this one, not the child) of a call's child: in its session, below
    it, of its own user id, or with ``mark`` (``NAME=value``) in their environment (from
    /proc; nothing where there is no /proc)."""
    needle = mark.encode()
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return []
    parents: dict[int, int] = {}
    found = set()
    for pid in pids:
        if pid in (os.getpid(), child):
            continue
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                stat = f.read()
            fields = stat[stat.rindex(b")") + 2 :].split()
            if fields[0] in (b"Z", b"X"):
                continue
            parents[pid] = int(fields[1])
            if int(fields[3]) == child:
                found.add(pid)
                continue
            if uid is not None and _uid_of(pid) == uid:
                found.add(pid)
                continue
            with open(f"/proc/{pid}/environ", "rb") as f:
                if needle in f.read().split(b"\0"):
                    found.add(pid)
        except (OSError, ValueError, IndexError):
            continue
    todo, seen = [child], {child}
    while todo:  # descendants: with the child as their subreaper, orphans are among them
        parent = todo.pop()
        kids = [p for p, pp in parents.items() if pp == parent and p not in seen]
        seen.update(kids)
        todo += kids
    return sorted(found | (seen - {child}))


def _uid_of(pid: int) -> int | None:
    """The real user id of ``pid`` (from its status: /proc/<pid> itself turns root-owned once
    a process has changed its user)."""
    with open(f"/proc/{pid}/status", "rb") as f:
        for line in f:
            if line.startswith(b"Uid:"):
                return int(line.split()[1])
    return None
