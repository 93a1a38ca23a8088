"""Which files on this machine the builder may read as the source of a log, and reading them safely.

A log names files (`compilation_metrics.co_filename`, `# File:` comments, tracebacks) and comes
from anywhere: a log that names `~/.ssh/id_rsa.py`, `/proc/self/environ` or a symlink planted
beside it must not make the app read that file, keep it in the session, or show it. So:

- a **capture** (the app's own run of the user's model file or script) reads the files its run
  imported, as it always did (`SourceLookup.capture()`);
- a **log or session from elsewhere** reads nothing unless the user asks ("Look up sources on this
  machine" in the Source pane, `--local-sources` on the CLI), and then only `.py` files whose real
  path (symlinks resolved first) lies under the roots `SourceLookup.for_log` names: the log's own
  folder, this interpreter's site-packages and stdlib, and folders the user adds.

Every read, trusted or not, refuses `/proc`, `/sys` and `/dev`, opens with O_NONBLOCK (a FIFO
swapped in never blocks) and O_NOFOLLOW, reads only a regular file (fstat after the open), and at
most `MAX_BYTES`. Not covered: a local attacker who swaps a folder of the resolved path between
the check and the open.
"""

from __future__ import annotations

import contextlib
import os
import site
import stat
import sys
import sysconfig
from collections.abc import Iterable
from dataclasses import dataclass

from compiler_core.trace.read_limits import is_pseudo_path

MAX_BYTES = 2 << 20  # one file; the largest transformers file (modeling_utils.py) is ~250 kB
_FLAGS = (os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NOCTTY", 0)
          | getattr(os, "O_CLOEXEC", 0))  # fmt: skip


@dataclass(frozen=True)
class SourceLookup:
    """Where source files may be read from. `trusted`: a capture's own run, whose files are the
    user's (any regular file it names); else only `.py` files under `roots` (real paths)."""

    roots: tuple[str, ...] = ()
    trusted: bool = False

    @classmethod
    def capture(cls) -> SourceLookup:
        return cls(trusted=True)

    @classmethod
    def for_log(cls, log_path: str, extra_roots: Iterable[str] = ()) -> SourceLookup:
        """The log's own folder (a rank directory is its own; none for ""), the environment's
        package and stdlib folders, and `extra_roots` (folders the user named)."""
        here = [] if not log_path else [log_path] if os.path.isdir(log_path) \
            else [os.path.dirname(os.path.abspath(log_path))]
        return cls(roots=_real_dirs([*here, *environment_roots(), *extra_roots]))

    def describe(self) -> str:
        return "the capture's own files" if self.trusted else ", ".join(self.roots)


def environment_roots() -> list[str]:
    """This interpreter's stdlib and package folders (purelib, platlib, site-packages, and the
    user site when it is on `sys.path`)."""
    paths = sysconfig.get_paths()
    out = [paths.get(k, "") for k in ("stdlib", "platstdlib", "purelib", "platlib")]
    with contextlib.suppress(AttributeError):  # virtualenv's old site.py lacks it
        out.extend(site.getsitepackages())
    user = site.getusersitepackages() if site.ENABLE_USER_SITE else ""
    if isinstance(user, str) and user in sys.path:
        out.append(user)
    return [p for p in out if p]


def _real_dirs(paths: Iterable[str]) -> tuple[str, ...]:
    out: dict[str, None] = {}
    for p in paths:
        real = os.path.realpath(p)
        if os.path.isdir(real) and not is_pseudo_path(real):
            out.setdefault(real, None)
    return tuple(out)


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def allowed(path: str, lookup: SourceLookup) -> str | None:
    """The real path `path` may be read at under `lookup`, or None. Pure path checks: nothing is
    opened, so a refused file is never touched."""
    if not os.path.isabs(path) or "\0" in path or is_pseudo_path(os.path.normpath(path)):
        return None
    if not lookup.trusted and (not path.endswith(".py") or ".." in path.split(os.sep)):
        return None
    real = os.path.realpath(path)
    if is_pseudo_path(real):
        return None
    if lookup.trusted:
        return real
    for root in lookup.roots:
        if _under(real, root):
            rel = os.path.relpath(real, root)
            # a dot folder under a root (`~/.ssh`, `.git`) holds no module a log could come from
            if real.endswith(".py") and not any(part.startswith(".") for part in rel.split(os.sep)):
                return real
    return None


def read_source(path: str, lookup: SourceLookup) -> str | None:
    """The text of `path` when `lookup` allows it and it is a regular file of at most
    `MAX_BYTES`; else None (never raises, never blocks)."""
    real = allowed(path, lookup)
    if real is None:
        return None
    try:
        fd = os.open(real, _FLAGS)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES:
            return None
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(MAX_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) > MAX_BYTES:  # grew after the fstat
        return None
    return data.decode("utf-8", errors="replace")
