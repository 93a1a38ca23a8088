"""Stages the other panes don't show: decompositions, autotuning, CUDA graphs, mode comparison.

Torch-free modules (importable by the GUI): `decompositions`, `autotune_records`,
`cudagraph_records`, `mode_compare`, `stage_artifacts`, plus `memory_budget` (the sweep; its
torch access goes through the seam). The capture-side recorders touch private torch, so they
live in the torch seam, `compiler_core/capture/hooks/`: `stage_hooks` (the one context manager
to enter), `decomp_capture`, `autotune_capture`, `cudagraph_capture`.
"""

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
