"""File names made from data, and writes that cannot leave the folder the user chose.

Sessions and trace logs come from other people. Any string in them (a partition's `graph`, a
kernel's `name`, a stage record's graph name) that became a path component unchecked could name
`../../site-packages/sitecustomize` and plant code that runs on the next Python start.
So every writer that builds a name from data goes through this module:

- `safe_name` turns any string into one harmless path component: only `[A-Za-z0-9_.-]`, no
  leading dot or dash (no hidden files, no option-like names), no trailing dot (Windows), never a
  Windows device name (`CON`, `NUL`, `COM1`, ...), never empty, never longer than `MAX_NAME`.
- `SafeFolder` hands out names inside one resolved folder, makes colliding names unique (case-
  insensitively, for macOS and Windows file systems), and checks every final path with
  `Path.resolve()` + `is_relative_to` before writing, so a symlink planted in the folder cannot
  redirect a write either. It never creates parent folders: a name is one component.

Qt-free, torch-free; the writes are atomic (temp file in the same folder, fsync, rename).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from compiler_core.session import codec

MAX_NAME = 120  # bytes of ASCII; far below every file system's 255
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_SUFFIX = re.compile(r"^\.[A-Za-z0-9]{1,10}$")  # suffixes are ours, never data
_WINDOWS_DEVICES = frozenset(
    {"con", "prn", "aux", "nul", "conin$", "conout$"}
    | {f"com{i}" for i in range(10)} | {f"lpt{i}" for i in range(10)}
    | {f"com{c}" for c in "¹²³"} | {f"lpt{c}" for c in "¹²³"}
)


class UnsafePathError(ValueError):
    """A path would lie outside the folder it must stay in."""


def safe_name(raw: object, fallback: str = "unnamed", max_len: int = MAX_NAME) -> str:
    """One path component built from `raw` (any value: it is `str()`-ed), safe on every OS.

    Runs of characters outside `[A-Za-z0-9_.-]` (separators, NUL, spaces, non-ASCII) become one
    `_`; leading dots and dashes and trailing dots are dropped; a Windows device name gets a `_`
    prefix; the result is cut to `max_len` and is never empty, `.` or `..`.
    """
    name = _UNSAFE.sub("_", str(raw)).lstrip(".-").rstrip(".")
    name = name[:max_len].rstrip(".")
    if not name:
        name = fallback
    if name.split(".", 1)[0].lower() in _WINDOWS_DEVICES:
        name = f"_{name}"[:max_len]
    return name


def ensure_inside(root: Path, path: Path) -> Path:
    """`path` resolved, or UnsafePathError if it is not strictly inside resolved `root`."""
    base = root.resolve()
    final = path.resolve()
    if final == base or not final.is_relative_to(base):
        raise UnsafePathError(f"refusing to write {path}: it resolves to {final}, outside {base}")
    return final


class SafeFolder:
    """Unique, sanitised file names inside one folder, and atomic writes that stay there."""

    def __init__(self, folder: str | os.PathLike[str], create: bool = True) -> None:
        if create:
            Path(folder).mkdir(parents=True, exist_ok=True)  # the folder itself is the user's choice
        self.root = Path(folder).resolve()
        self._taken: set[str] = set()

    def name(self, stem: object, suffix: str = "", fallback: str = "unnamed") -> str:
        """A fresh name `stem + suffix` (`_2`, `_3`... on collision within this export).

        `stem` may come from data and is sanitised; `suffix` is the caller's own (".py")."""
        if suffix and not _SUFFIX.match(suffix):
            raise ValueError(f"suffix {suffix!r} is not a plain extension such as '.py'")
        base = safe_name(stem, fallback, MAX_NAME - len(suffix) - 8)
        candidate, n = f"{base}{suffix}", 1
        while candidate.lower() in self._taken:
            n += 1
            candidate = f"{base}_{n}{suffix}"
        self._taken.add(candidate.lower())
        return candidate

    def path(self, stem: object, suffix: str = "", fallback: str = "unnamed") -> Path:
        """Where `stem + suffix` goes: sanitised, unique and verified to lie inside the folder."""
        return ensure_inside(self.root, self.root / self.name(stem, suffix, fallback))

    def write_text(self, path: Path, text: str) -> Path:
        """Write `text` to `path` (from `path()`), re-checking it is still inside the folder."""
        final = ensure_inside(self.root, path)
        if final.parent != self.root:
            raise UnsafePathError(f"refusing to write {path}: not directly inside {self.root}")
        atomic_write_text(final, text)
        return final


def atomic_write_text(path: Path, text: str) -> None:
    """The codec's atomic write, but the parent must already exist: names made from data are one
    component, so there is never a folder to create."""
    codec.atomic_write_text(path, text, make_parent=False)
