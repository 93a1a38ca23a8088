"""Bounds on what reading one trace file may cost, and opening only regular files.

- `max_line_bytes` (default 64 MiB, `$COMPILESCOPE_MAX_LINE_MB`): the longest line kept, and the
  most payload bytes one record keeps. The longest line in our real 32-layer logs is 127 KB
  (HF Llama training, bench/data), so 64 MiB is 500x headroom. A line that is kept costs ~5x
  its length in transient copies (block join, payload slice, TAB removal, str): 500 MiB peak
  for a 100 MiB payload line (tracemalloc), so the cap bounds that at ~320 MiB. A longer line
  is skipped as it streams past, in chunks no larger than the cap, so reading it peaks near the
  cap, and its record is skipped with a warning. Unbounded, a 1 GiB line would run the reader
  out of memory.
- `max_gzip_ratio` (200x, after the first `gzip_ratio_floor` 64 MiB of output): real logs
  compress 11-14x with gzip (bench/data); a gzip bomb of zeros expands ~1000x. Decompression
  stops there with a warning; records read before are kept.

`open_regular` opens without blocking and refuses anything but a regular file, so a FIFO, a
device (a symlink to /dev/zero named like a rank log), a directory or a broken link in a rank
directory is one warning, never a hang.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

DEFAULT_MAX_LINE_MB = 64


def _env_max_line() -> int:
    text = os.environ.get("COMPILESCOPE_MAX_LINE_MB", "")
    try:
        mb = float(text) if text else DEFAULT_MAX_LINE_MB
    except ValueError:
        mb = DEFAULT_MAX_LINE_MB
    return max(int(mb * 2**20), 1024)


@dataclass(frozen=True)
class ReadLimits:
    max_line_bytes: int = -1  # -1: $COMPILESCOPE_MAX_LINE_MB, else DEFAULT_MAX_LINE_MB
    max_gzip_ratio: float = 200.0
    gzip_ratio_floor: int = 64 << 20

    @property
    def line_cap(self) -> int:
        return self.max_line_bytes if self.max_line_bytes > 0 else _env_max_line()


class NotRegularFileError(OSError):
    """A rank entry that is a FIFO, device, socket or directory: never read."""


def open_regular(path: str) -> int:
    """An fd for `path` opened read-only; raises `NotRegularFileError` unless it is a regular file.

    O_NONBLOCK makes `open` of a FIFO with no writer return at once instead of waiting forever;
    the flag is cleared again for the regular file we keep (it means nothing for one anyway)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFileError(f"not a regular file ({_kind(st.st_mode)}): {path}")
        if _on_pseudo_filesystem(path, st):
            raise NotRegularFileError(f"a file of the kernel's pseudo-filesystems ({path}), not a log")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


_PSEUDO_ROOTS = ("/proc", "/sys", "/dev")


def is_pseudo_path(path: str) -> bool:
    """A path under /proc, /sys or /dev (the caller resolves symlinks first): never a log or a
    source file, whatever it names. The path check of every read, trace or source lookup."""
    return any(path == root or path.startswith(root + "/") for root in _PSEUDO_ROOTS)


def _on_pseudo_filesystem(path: str, st: os.stat_result) -> bool:
    """/proc, /sys and /dev files pass as regular files but are not: /proc/self/pagemap reads
    8 bytes per page of the address space (terabytes, minutes of reading), others block or
    change under the reader. Refused by where the path really leads (symlinks resolved) and by
    the device the file lives on (a bind mount elsewhere)."""
    if is_pseudo_path(os.path.realpath(path)):
        return True
    for root in ("/proc", "/sys"):  # /dev may share the root filesystem's device
        try:
            if os.stat(root).st_dev == st.st_dev:
                return True
        except OSError:
            continue
    return False


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):  # fmt: skip
        if test(mode):
            return name
    return "not a file"
