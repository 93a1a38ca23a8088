"""Compile ids as tlparse prints them, and rank discovery for multi-rank trace directories.

tlparse renders `[!ca/frame/compile_attempt]`; we keep the same text without brackets. Restart
attempts (`_1`) are folded into their compile by the builder, so ids here omit the attempt.
"""

from __future__ import annotations

import os
import re
from typing import Any

_RANK_IN_NAME = re.compile(r"rank_(\d+)")
TRACE_PREFIX = "dedicated_log_torch_trace"


def compile_id_of(meta: dict[str, Any]) -> str | None:
    """`"0/1"`, `"!0/0/1"` for compiled autograd; None when the record names no compile."""
    frame = meta.get("frame_id")
    fcid = meta.get("frame_compile_id")
    ca = meta.get("compiled_autograd_id")
    if frame is None and fcid is None and ca is None:
        return None
    text = f"{_dash(frame)}/{_dash(fcid)}"
    return f"!{ca}/{text}" if ca is not None else text


def compile_id_from_string(text: str) -> str | None:
    """Normalise torch's own `compile_id` strings ("0/0", "[0/0_1]", "None") to our form."""
    text = text.strip().strip("[]")
    if not text or text == "None":
        return None
    return re.sub(r"_\d+$", "", text)


def _dash(value: Any) -> str:
    return "-" if value is None else str(value)


def rank_from_filename(name: str) -> int | None:
    m = _RANK_IN_NAME.search(name)
    return int(m.group(1)) if m else None


def trace_files(path: str | os.PathLike[str]) -> list[tuple[str, int | None]]:
    """Files to read for `path` with their rank (from the name; None when it has none).

    A directory contributes only `dedicated_log_torch_trace*` files (`.log`, or `.log.gz` /
    `.log.xz` read through their decompressor), as tlparse's multi-rank mode does; when a plain
    and a compressed form of one log exist the plain one is read once. A plain file is read whatever its name.
    """
    p = os.fspath(path)
    if not os.path.isdir(p):
        return [(p, rank_from_filename(os.path.basename(p)))]
    listed = set(os.listdir(p))
    names = sorted(
        n for n in listed
        if n.startswith(TRACE_PREFIX)
        and (n.endswith(".log") or (n.endswith((".log.gz", ".log.xz")) and n.rsplit(".", 1)[0] not in listed))
    )  # fmt: skip
    files = [(os.path.join(p, n), rank_from_filename(n)) for n in names]
    files.sort(key=lambda f: (f[1] is None, f[1] or 0, f[0]))
    return files
