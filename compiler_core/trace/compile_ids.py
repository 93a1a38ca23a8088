"""Compile ids as tlparse prints them.

tlparse renders `[!ca/frame/compile_attempt]`; we keep the same text without brackets. Restart
attempts (`_1`) are folded into their compile by the builder, so ids here omit the attempt.
Which files of a folder are logs, and their ranks, is trace_folders.py (re-exported here for the
readers that import it from this module).
"""

from __future__ import annotations

import re
from typing import Any

from compiler_core.trace.trace_folders import TRACE_PREFIX as TRACE_PREFIX
from compiler_core.trace.trace_folders import rank_from_filename as rank_from_filename
from compiler_core.trace.trace_folders import trace_files as trace_files


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
