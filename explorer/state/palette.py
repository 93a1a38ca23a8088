"""Stable colours: one per kernel (fusion group) and the fixed status colours of source lines.

A kernel keeps its colour across panes and runs because the colour derives from its name, not
from the order in which a pane happened to meet it.
"""

from __future__ import annotations

import zlib

from PySide6.QtGui import QColor, QIcon, QPixmap

# Qualitative palette (Tableau 20 light/dark pairs interleaved): distinct on white backgrounds.
# No reds or pinks: a source line tinted with a pink kernel colour read as the red of a graph
# break (BROKE) in logs that had none; olive and dark teal take their places.
_PALETTE = (
    "#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#b6992d", "#9c755f",
    "#a0cbe8", "#ffbe7d", "#8cd17d", "#d4a6c8", "#86bcb6", "#f1ce63", "#499894", "#d7b5a6",
)

SELECT_COLOR_HEX = "#ffd666"
CAPTURED = QColor("#cfe8cf")
BROKE = QColor("#e15759")
RECOMPILED = QColor("#f1ce63")
SAVED = QColor("#b07aa1")


def color_for(name: str) -> QColor:
    return QColor(_PALETTE[zlib.crc32(name.encode()) % len(_PALETTE)])


def indexed_color(i: int) -> QColor:
    return QColor(_PALETTE[i % len(_PALETTE)])


def color_icon(color: QColor | None) -> QIcon:
    """A small square swatch (transparent for None) for list rows and combo boxes."""
    pix = QPixmap(10, 10)
    pix.fill(color if color is not None else QColor(0, 0, 0, 0))
    return QIcon(pix)
