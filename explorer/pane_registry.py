"""Which panes the window docks, and how to build each one.

Pane modules are imported only when the pane is built: the canvas and the plots pull in numpy and
pyqtgraph, which the window must not wait for before it first appears (bench/gui_startup.py).

Every pane listed here ships with the app, so a pane that does not build is our bug and fails
loudly (`PaneBuildError`, naming the pane and why): a registry that quietly left out a pane whose
module failed to import hid exactly such bugs. Every target is a `Pane` (explorer/panes/base.py),
the one protocol the window and the state talk to.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from explorer.panes.base import Pane
from explorer.state import SelectionModel, SessionState


class PaneBuildError(RuntimeError):
    """A registered pane could not be built (its module failed to import, or it is no Pane)."""


@dataclass(frozen=True)
class PaneSpec:
    key: str  # object name of the pane class; the dock is "dock:<key>" in saved layouts
    title: str
    stage: str  # navigator stage that brings it forward
    target: str  # "module:Class" of a Pane subclass in explorer.panes
    deferred: bool = False
    tab_with: str = ""  # key of the pane this one shares a tab group with in the default layout

    def build(self, state: SessionState, selection: SelectionModel) -> Pane:
        module, _, name = self.target.partition(":")
        try:
            factory = getattr(importlib.import_module(f"explorer.panes.{module}"), name)
        except (ImportError, AttributeError) as exc:
            raise PaneBuildError(f"pane {self.key} ({self.target}) does not import: "
                                 f"{type(exc).__name__}: {exc}") from exc
        if not (isinstance(factory, type) and issubclass(factory, Pane)):
            raise PaneBuildError(f"pane {self.key} ({self.target}) is not a Pane subclass")
        pane: Pane = factory(state, selection)
        return pane


PANES: tuple[PaneSpec, ...] = (
    PaneSpec("OverviewPane", "Overview", "overview", "overview_pane:OverviewPane"),
    PaneSpec("RanksPane", "Ranks", "overview", "ranks_pane:RanksPane", deferred=True),
    PaneSpec("SourcePane", "Source", "source", "source_pane:SourcePane"),
    PaneSpec("BreakSummaryPane", "Graph breaks", "dynamo", "break_summary_pane:BreakSummaryPane"),
    PaneSpec("LinePipelinePane", "Per-line pipeline", "source", "line_pipeline_pane:LinePipelinePane"),
    PaneSpec("DynamoPane", "Dynamo", "dynamo", "dynamo_pane:DynamoPane", deferred=True),
    PaneSpec("AotPane", "AOTAutograd", "aot", "aot_pane:AotPane", deferred=True),
    PaneSpec("InductorPane", "Inductor", "inductor", "inductor_pane:InductorPane", deferred=True),
    PaneSpec("KernelCodePane", "Kernel code", "kernels", "kernel_code_pane:KernelCodePane"),
    PaneSpec("CompileTimePane", "Compile time", "timeline", "compile_time_pane:CompileTimePane", True),
    PaneSpec("TimelinePane", "Timeline", "timeline", "timeline_pane:TimelinePane", deferred=True),
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
