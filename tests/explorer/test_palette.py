"""Kernel colours never read as a status colour of a source line."""

from __future__ import annotations

from explorer.state.palette import BROKE, color_for, indexed_color


def _hue_distance(a: int, b: int) -> int:
    d = abs(a - b) % 360
    return min(d, 360 - d)


def test_no_kernel_colour_looks_like_a_graph_break() -> None:
    """A line fused into a pink kernel looked like a graph break in logs that had none."""
    broke = BROKE.hsvHue()
    colours = [indexed_color(i) for i in range(16)] + [color_for(f"triton_poi_fused_{i}") for i in range(200)]
    for c in colours:
        if c.hsvSaturation() > 50:  # greys and near-whites carry no hue
            assert _hue_distance(c.hsvHue(), broke) > 18, c.name()  # brown (21°) reads as brown
