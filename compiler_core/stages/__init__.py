"""Stages the other panes don't show: decompositions, autotuning, CUDA graphs, mode comparison.

Torch-free modules (importable by the GUI): `decompositions`, `autotune_records`,
`cudagraph_records`, `mode_compare`, `stage_artifacts`, plus `memory_budget` (the sweep; its
torch access goes through the seam). The capture-side recorders touch private torch, so they
live in the torch seam, `compiler_core/capture/hooks/`: `stage_hooks` (the one context manager
to enter), `decomp_capture`, `autotune_capture`, `cudagraph_capture`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from compiler_core.stages.autotune_records import autotune_from_artifact, ranked
    from compiler_core.stages.cudagraph_records import cudagraph_from_artifact, skip_summary
    from compiler_core.stages.decompositions import (
        DecompRow,
        DecompSummary,
        decomposition_summary,
        decomposition_table,
        rows_for_refs,
    )
    from compiler_core.stages.mode_compare import ModeRow, mode_rows, text_table
    from compiler_core.stages.stage_artifacts import with_stage_artifacts

# Names resolved on first use (PEP 562): `python -m compiler_core import` needs two of these
# modules, and `mode_compare` alone pulled in the timeline and capture-hook modules (~6 ms of the
# import's start-up).
_HOME = {
    "autotune_from_artifact": "autotune_records", "ranked": "autotune_records",
    "cudagraph_from_artifact": "cudagraph_records", "skip_summary": "cudagraph_records",
    "DecompRow": "decompositions", "DecompSummary": "decompositions",
    "decomposition_summary": "decompositions", "decomposition_table": "decompositions",
    "rows_for_refs": "decompositions", "ModeRow": "mode_compare", "mode_rows": "mode_compare",
    "text_table": "mode_compare", "with_stage_artifacts": "stage_artifacts",
}  # fmt: skip


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "DecompRow",
    "DecompSummary",
    "ModeRow",
    "autotune_from_artifact",
    "cudagraph_from_artifact",
    "decomposition_summary",
    "decomposition_table",
    "mode_rows",
    "ranked",
    "rows_for_refs",
    "skip_summary",
    "text_table",
    "with_stage_artifacts",
]
