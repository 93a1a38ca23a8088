"""How panes write sizes: one binary-unit format, so the AOT pane's saved bytes, the Modes
table's peak memory and the Overview read alike (1.5 KiB, 451.8 MiB). The core owns it: the
Overview and its HTML report write sizes too."""

from __future__ import annotations

from compiler_core.overview.model import human_bytes

__all__ = ["human_bytes"]
