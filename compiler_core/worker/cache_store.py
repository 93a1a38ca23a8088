"""CompileScope's cache folder: what it holds, its size bound, and clearing it.

Captures run with Inductor's caches and temp files in one folder of ours (`default_cache_dir`:
$COMPILESCOPE_CACHE_DIR, else ~/.cache/compilescope): the compiled C++/Triton kernels and FX
graphs make a second capture of the same model fast. Unbounded it only grows (by a lot per
capture, even of a small model), so before each capture the oldest files (by last
modification) are deleted until the folder is under 80 % of its cap: `COMPILESCOPE_CACHE_MAX_MB`,
default 2048. A file a running compile writes is new, so it is the last to go. `clear` empties the
folder (`python -m compiler_core cache --clear`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

DEFAULT_CAP_MB = 2048
KEEP_FRACTION = 0.8  # trim to this share of the cap, so every capture does not trim again


@dataclass(frozen=True)
class Usage:
    path: Path
    files: int
    bytes: int
    cap_bytes: int


def cap_bytes() -> int:
    """The cap from $COMPILESCOPE_CACHE_MAX_MB (megabytes; 0 or less: no cap), else the default."""
    raw = os.environ.get("COMPILESCOPE_CACHE_MAX_MB", "")
    try:
        mb = int(raw) if raw.strip() else DEFAULT_CAP_MB
    except ValueError:
        mb = DEFAULT_CAP_MB
    return max(mb, 0) * 1024 * 1024


def _files(root: Path) -> list[tuple[float, int, Path]]:
    """(mtime, size, path) of every regular file under `root`; links are not followed."""
    out: list[tuple[float, int, Path]] = []
    for folder, _dirs, names in os.walk(root, followlinks=False):
        for name in names:
            p = Path(folder) / name
            try:
                st = p.lstat()
            except OSError:
                continue
            if not p.is_symlink():
                out.append((st.st_mtime, st.st_size, p))
    return out


def usage(root: Path, cap: int | None = None) -> Usage:
    files = _files(root) if root.is_dir() else []
    return Usage(root, len(files), sum(size for _, size, _ in files), cap_bytes() if cap is None else cap)


def trim(root: Path, cap: int | None = None) -> int:
    """Delete the oldest files under `root` until it holds at most KEEP_FRACTION of `cap` bytes
    (only when it holds more than `cap`); returns the bytes freed. Empty folders go too."""
    limit = cap_bytes() if cap is None else cap
    if limit <= 0 or not root.is_dir():
        return 0
    files = _files(root)
    total = sum(size for _, size, _ in files)
    if total <= limit:
        return 0
    freed = 0
    for _, size, path in sorted(files):
        if total - freed <= limit * KEEP_FRACTION:
            break
        try:
            path.unlink()
        except OSError:
            continue
        freed += size
    _drop_empty_folders(root)
    return freed


def clear(root: Path) -> int:
    """Delete everything under `root` (the folder itself stays); returns the bytes freed."""
    if not root.is_dir():
        return 0
    freed = usage(root).bytes
    for child in root.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                child.unlink()
    return freed


def _drop_empty_folders(root: Path) -> None:
    for folder, _dirs, _names in sorted(os.walk(root), key=lambda t: -len(t[0])):
        p = Path(folder)
        if p != root:
            with contextlib.suppress(OSError):
                p.rmdir()  # only succeeds when empty
