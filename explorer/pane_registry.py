"""Which panes the window docks, and how to build each one.

Pane modules are imported only when the pane is built: the canvas and the plots pull in numpy and
pyqtgraph, which the window must not wait for before it first appears (bench/gui_startup.py).
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtWidgets import QWidget

from explorer.state import SelectionModel, SessionState


@dataclass(frozen=True)
class PaneSpec:
    key: str  # object name of the pane class; the dock is "dock:<key>" in saved layouts
    title: str
    stage: str  # navigator stage that brings it forward
    target: str  # "module:Class" of a Pane in explorer.panes, or "module:function(state) -> QWidget"
    deferred: bool = False
    tab_with: str = ""  # key of the pane this one shares a tab group with in the default layout

    def available(self) -> bool:
        """Panes owned by other work may not be installed yet; the window simply leaves them out."""
        return importlib.util.find_spec(f"explorer.panes.{self.target.partition(':')[0]}") is not None

    def build(self, state: SessionState, selection: SelectionModel) -> QWidget:
        module, _, name = self.target.partition(":")
        factory: Callable[..., QWidget] = getattr(importlib.import_module(f"explorer.panes.{module}"), name)
        if isinstance(factory, type):
            return factory(state, selection)
        return factory(state)


PANES: tuple[PaneSpec, ...] = (
    PaneSpec("SourcePane", "Source", "source", "source_pane:SourcePane"),
    PaneSpec("BreakSummaryPane", "Graph breaks", "dynamo", "break_summary_pane:BreakSummaryPane"),
    PaneSpec("LinePipelinePane", "Per-line pipeline", "source", "line_pipeline_pane:LinePipelinePane"),
    PaneSpec("DynamoPane", "Dynamo", "dynamo", "dynamo_pane:DynamoPane", deferred=True),
    PaneSpec("AotPane", "AOTAutograd", "aot", "aot_pane:AotPane", deferred=True),
    PaneSpec("InductorPane", "Inductor", "inductor", "inductor_pane:InductorPane", deferred=True),
    PaneSpec("KernelCodePane", "Kernel code", "kernels", "kernel_code_pane:KernelCodePane"),
    PaneSpec("CompileTimePane", "Compile time", "timeline", "compile_time_pane:CompileTimePane", True),
    PaneSpec("TimelinePane", "Timeline", "timeline", "timeline_dock:make_timeline_pane", deferred=True),
    # Stage-detail panes, tabbed behind the main pane of their stage.
    PaneSpec("DecompositionPane", "Decompositions", "aot", "decomposition_pane:DecompositionPane",
             True, tab_with="AotPane"),
    PaneSpec("AutotunePane", "Autotuning", "inductor", "autotune_pane:AutotunePane", True, "KernelCodePane"),
    PaneSpec("CudaGraphPane", "CUDA graphs", "inductor", "cudagraph_pane:CudaGraphPane", True,
             "KernelCodePane"),
    PaneSpec("ModeComparePane", "Modes", "timeline", "mode_compare_pane:ModeComparePane", True,
             "TimelinePane"),
    PaneSpec("DiagnosticsPane", "Diagnostics", "source", "diagnostics_pane:DiagnosticsPane",
             tab_with="BreakSummaryPane"),
)
