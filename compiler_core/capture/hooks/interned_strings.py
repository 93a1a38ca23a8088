"""The structured trace's string intern table (`torch._logging.structured.INTERN_TABLE`).

Stack frames in the trace name files by an interned id; the table maps file path -> id. The
capture reads it to find the user's source files (and `trace_sink` re-emits it). Read only.
"""

from __future__ import annotations

TORCH_VERSIONS = ("2.11", "2.15")


def intern_table() -> dict[str, int]:
    """The live table (path -> id) of strings interned so far in this process."""
    from torch._logging import structured

    return structured.INTERN_TABLE
