"""Every process a capture started is gone when it ends, CLI and GUI alike.

Killing the worker's process group is not enough: a model file can start a child in a new
session (`setsid`), which leaves the group, and once the worker dies its orphans are adopted by
init, out of our reach. Two things together close that:

- the process that starts workers (the CLI, the GUI) makes itself a *child subreaper*
  (`prctl(PR_SET_CHILD_SUBREAPER)`, Linux ≥ 3.4): orphans of the worker's tree are re-parented
  to it instead of init, so they stay findable as our children;
- every worker gets a per-run token in its environment (`RUN_TOKEN_ENV`), which its descendants
  inherit (also across `setsid` and double forks).

`sweep(token)` then kills, until none is left: every process carrying the token, every child of
ours that is not a registered worker (an adopted orphan that cleared its environment), and all of
their descendants; then it reaps the adopted zombies. A process that both cleared its
environment and escaped before we became its subreaper is not found: that needs a cgroup,
which this module does not create (see memory_limit.py for what is and is not covered).
Linux only (/proc); elsewhere both functions do nothing and say so by their return values.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import secrets
import signal
import time

RUN_TOKEN_ENV = "COMPILESCOPE_RUN_TOKEN"
PR_SET_CHILD_SUBREAPER = 36
_subreaper = False
_own_children: set[int] = set()  # workers this process started and waits for itself


def register_child(pid: int) -> None:
    """A worker we started (and will wait for): never swept as an adopted orphan."""
    _own_children.add(pid)


def unregister_child(pid: int) -> None:
    _own_children.discard(pid)


def new_run_token() -> str:
    return secrets.token_hex(12)


def become_subreaper() -> bool:
    """Make this process adopt orphaned descendants (once per process); False where unsupported."""
    global _subreaper
    if _subreaper:
        return True
    if not os.path.isdir("/proc/self"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        _subreaper = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        _subreaper = False
    return _subreaper


def _processes() -> dict[int, int]:
    """pid -> ppid for every visible process."""
    out: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()  # the command name may hold spaces and ')'
        out[int(name)] = int(fields[1])
    return out


def _has_token(pid: int, token: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            return token in fh.read()
    except OSError:
        return False


def _is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return True
    return stat[stat.rfind(b")") + 2 :].startswith(b"Z")


def survivors(token: str) -> list[int]:
    """Live processes of the run `token` (see the module docstring), descendants included."""
    if not os.path.isdir("/proc"):
        return []
    procs = _processes()
    me = os.getpid()
    needle = f"{RUN_TOKEN_ENV}={token}".encode()
    found = {pid for pid in procs if pid != me and _has_token(pid, needle)}
    if _subreaper:
        found |= {pid for pid, ppid in procs.items() if ppid == me and pid not in _own_children}
    children: dict[int, list[int]] = {}
    for pid, ppid in procs.items():
        children.setdefault(ppid, []).append(pid)
    todo = list(found)
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found and child != me:
                found.add(child)
                todo.append(child)
    return sorted(pid for pid in found if not _is_zombie(pid))


def tree_pss_bytes(root: int) -> int:
    """Resident memory (PSS) of `root`, its descendants and the orphans we adopted, summed.

    What the per-process rlimits cannot bound: a model that forks N children gets the cap N
    times. The parent polls this (every 0.5 s) and kills the run past the cap. Only /proc files
    of the run's own processes are read besides /proc/*/stat (a few ms), cheap enough for the
    GUI's poll timer."""
    if not os.path.isdir("/proc"):
        return 0
    procs = _processes()
    me = os.getpid()
    tree = {root}
    if _subreaper:
        tree |= {p for p, pp in procs.items() if pp == me and p not in _own_children}
    children: dict[int, list[int]] = {}
    for pid, ppid in procs.items():
        children.setdefault(ppid, []).append(pid)
    todo = list(tree)
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in tree:
                tree.add(child)
                todo.append(child)
    return sum(_pss(pid) for pid in tree)


def _pss(pid: int) -> int:
    """Proportional set size: a page shared by k processes counts 1/k in each, so a forked tree
    (whose children share the parent's pages copy-on-write) sums to what it really holds. RSS
    would count those pages once per child, so a few forks of a torch process would "use" gigabytes
    before allocating anything. Falls back to RSS where smaps_rollup is missing (Linux < 4.14)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as fh:
            for line in fh:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        with open(f"/proc/{pid}/statm", "rb") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


QUIET_SCANS = 3  # empty scans in a row before a run's processes are taken to be gone
QUIET_GAP_S = 0.03


def sweep(token: str, timeout_s: float = 5.0) -> list[int]:
    """SIGKILL every survivor of the run until none is left (or `timeout_s`); reap adopted zombies.

    Returns the pids killed. Stopped first, then killed, so a fork loop cannot outrun us."""
    killed: list[int] = []
    deadline = time.monotonic() + timeout_s
    quiet = 0  # consecutive scans that found nothing
    while True:
        pids = survivors(token)
        quiet = 0 if pids else quiet + 1
        # One empty scan proves little: /proc is listed, then each process's stat read, so a fork
        # chain whose parent exits after the listing and whose child is born after it is in no
        # scan (a chain that forks quickly leaves sweeps empty-handed now and then).
        if quiet >= QUIET_SCANS or time.monotonic() > deadline:
            break
        if not pids:
            time.sleep(QUIET_GAP_S)
            continue
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, sig)
        killed += [p for p in pids if p not in killed]
        _reap()
        time.sleep(0.02)
    _reap()
    return killed


def _reap() -> None:
    """Collect adopted children that have died (not the ones our callers wait for themselves)."""
    if not _subreaper:
        return
    for pid, ppid in _processes().items():
        if ppid == os.getpid() and pid not in _own_children and _is_zombie(pid):
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)
