"""How panes write sizes: one binary-unit format, so the AOT pane's saved bytes and the Modes
table's peak memory read alike (1.5 KiB, 451.8 MiB)."""

from __future__ import annotations


def human_bytes(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"
