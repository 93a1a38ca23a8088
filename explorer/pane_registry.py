"""Which panes the window docks, and how to build each one.

Pane modules are imported only when the pane is built: the canvas and the plots pull in numpy and
pyqtgraph, which the window must not wait for before it first appears (bench/gui_startup.py).
"""

from __future__ import annotations

import importlib
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
)
