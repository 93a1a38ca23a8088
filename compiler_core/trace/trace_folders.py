"""Which files of a folder are trace logs, and which rank each one is.

Users hand us folders in the shapes their tools leave behind:

- what `TORCH_TRACE=DIR` writes: `dedicated_log_torch_trace[_rank_N]_xxx.log` in DIR (the shape
  tlparse's `--all-ranks-html` reads);
- a cluster job's folder, one subfolder per host: `job/host0/dedicated_log_torch_trace_rank_0_xxx.log`;
- tlparse's output folder (`tl_out/` by default), where tlparse keeps a verbatim copy of the log
  it read as `raw.log`, or `rank_N/raw.log` per rank with `--all-ranks-html`.

So the search goes down a few folders (`MAX_DEPTH`; deep enough for `job/host/rank`, shallow
enough that a home folder handed in by mistake is not walked whole) and takes the
`dedicated_log_torch_trace*` logs; only where there are none does it take tlparse's `raw.log`
copies (a folder holding both the logs and a tlparse report of them would read each log twice).
A rank comes from the file name, else from a `rank_N` folder on the way down from the folder
given (never from the folders above it: a temp folder named `rank_3` says nothing).
"""

from __future__ import annotations

import os
import re

_RANK_IN_NAME = re.compile(r"rank_(\d+)")
TRACE_PREFIX = "dedicated_log_torch_trace"
TLPARSE_COPY = "raw.log"  # tlparse's copy of the log it read, in its output folder
_LOG_ENDINGS = (".log", ".log.gz", ".log.xz")
MAX_DEPTH = 3  # folders below the one given that are searched: job/host/rank/<log>


def rank_from_filename(name: str) -> int | None:
    m = _RANK_IN_NAME.search(name)
    return int(m.group(1)) if m else None


def trace_files(path: str | os.PathLike[str]) -> list[tuple[str, int | None]]:
    """Files to read for `path` with their rank (None when neither name nor folder gives one),
    rank order first. A plain file is read whatever its name; a folder gives its trace logs (see
    the module docstring), `[]` when it holds none. `.log.gz` / `.log.xz` logs are read through
    their decompressor, and where a plain and a compressed form of one log sit side by side the
    plain one is read once."""
    p = os.fspath(path)
    if not os.path.isdir(p):
        return [(p, rank_from_filename(os.path.basename(p)))]
    logs: list[str] = []
    copies: list[str] = []
    for folder, names in _folders(p):
        logs.extend(os.path.join(folder, n) for n in _trace_logs(names))
        if TLPARSE_COPY in names:
            copies.append(os.path.join(folder, TLPARSE_COPY))
    files = [(f, _rank_of(p, f)) for f in (logs or copies)]
    files.sort(key=lambda f: (f[1] is None, f[1] or 0, f[0]))
    return files


def _trace_logs(names: set[str]) -> list[str]:
    return [
        n for n in names
        if n.startswith(TRACE_PREFIX)
        and (n.endswith(".log") or (n.endswith((".log.gz", ".log.xz")) and n.rsplit(".", 1)[0] not in names))
    ]  # fmt: skip


def _named_as_log(name: str) -> bool:
    return name == TLPARSE_COPY or (name.startswith(TRACE_PREFIX) and name.endswith(_LOG_ENDINGS))


def _folders(root: str) -> list[tuple[str, set[str]]]:
    """`root` and its subfolders down to `MAX_DEPTH`, each with the names of its entries that are
    not folders or are named as a log (the reader then says what such an entry is). Symlinked
    folders are not entered (a link to an ancestor would loop) and hidden ones are skipped (`.git`,
    caches); a subfolder that cannot be listed is passed over, but `root` itself must list (its
    error is the user's answer)."""
    out: list[tuple[str, set[str]]] = []
    pending = [(root, 0)]
    while pending:
        folder, depth = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            if folder == root:
                raise
            continue
        names = set()
        for entry in entries:
            try:
                is_folder = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if not is_folder or _named_as_log(entry.name):  # a folder named as a log: refused with a warning
                names.add(entry.name)
            elif depth < MAX_DEPTH and not entry.name.startswith("."):
                pending.append((entry.path, depth + 1))
        out.append((folder, names))
    return out


def _rank_of(root: str, file: str) -> int | None:
    rank = rank_from_filename(os.path.basename(file))
    if rank is not None:
        return rank
    below = os.path.relpath(os.path.dirname(file), root).split(os.sep)
    for part in reversed(below):  # the nearest `rank_N` folder
        if part.startswith("rank_") and part[5:].isdigit():
            return int(part[5:])
    return None
