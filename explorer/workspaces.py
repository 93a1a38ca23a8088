"""Workspaces: one question at a time, each stage's panes laid out for its task.

Fifteen docks side by side leave each a few lines at 1366x768, and almost every task needed
them rearranged. The lesson the product grew from asks one question at a time (what did Dynamo
capture and where did it break; which backward op does this forward op make and what is saved;
what got fused; what does each mode cost per step), so by default the window shows one
workspace: the panes that answer one of those questions, side by side. The all-panes view stays
one toggle away (the navigator's "All panes"), and each arrangement the user makes is kept per
workspace, across runs (`MainWindow.save_layout`).

A workspace's default arrangement is a short recipe of dock operations, expressed as fractions
of the window, so it fits any window size. Qt-only; no pane is touched, only its dock.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget, QMainWindow

H, V = Qt.Orientation.Horizontal, Qt.Orientation.Vertical
LEFT = Qt.DockWidgetArea.LeftDockWidgetArea


@dataclass(frozen=True)
class Workspace:
    """`main`: the pane brought to the front. `split`: (first, second, orientation, share of the
    first) applied in order after `main` is placed. `tabs`: anchor -> panes tabbed behind it
    (the anchor stays on top)."""

    key: str
    title: str
    main: str
    split: tuple[tuple[str, str, Qt.Orientation, float], ...] = ()
    tabs: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def docks(self) -> list[str]:
        keys = [self.main] + [k for a, b, _, _ in self.split for k in (a, b)]
        keys += [k for anchor, behind in self.tabs for k in (anchor, *behind)]
        return list(dict.fromkeys(keys))


WORKSPACES: tuple[Workspace, ...] = (
    Workspace("overview", "Overview", "OverviewPane",
              split=(("OverviewPane", "RanksPane", V, 0.6),)),  # Ranks: shown for several ranks
    Workspace("dynamo", "Source + Dynamo", "DynamoPane",
              split=(("DynamoPane", "BreakSummaryPane", V, 0.62),
                     ("SourcePane", "DynamoPane", H, 0.38)),
              tabs=(("BreakSummaryPane", ("LinePipelinePane", "DiagnosticsPane")),)),
    Workspace("aot", "AOTAutograd", "AotPane",
              split=(("SourcePane", "AotPane", H, 0.28),),
              tabs=(("AotPane", ("DecompositionPane",)),)),
    Workspace("inductor", "Inductor", "InductorPane",
              split=(("InductorPane", "KernelCodePane", H, 0.45),),
              tabs=(("KernelCodePane", ("AutotunePane", "CudaGraphPane")),)),
    Workspace("timeline", "Timeline", "TimelinePane",
              split=(("TimelinePane", "ModeComparePane", V, 0.58),
                     ("ModeComparePane", "CompileTimePane", H, 0.55))),
)
BY_KEY = {w.key: w for w in WORKSPACES}
# navigator stages that open another stage's workspace
STAGE_WORKSPACE = {"source": "dynamo", "kernels": "inductor"}


def workspace_of(stage: str) -> Workspace | None:
    return BY_KEY.get(STAGE_WORKSPACE.get(stage, stage))


def arrange(window: QMainWindow, docks: dict[str, QDockWidget], ws: Workspace,
            tabify: Callable[[QDockWidget, QDockWidget], None] | None = None) -> None:
    """Lay `ws` out from scratch: its docks placed and sized by the recipe, every other hidden.
    Panes a build leaves out (an optional pane) are skipped."""
    mine = [k for k in ws.docks() if k in docks]
    for key, dock in docks.items():
        if key not in mine:
            dock.hide()
    if ws.main not in docks:
        return
    first = docks[ws.main]
    window.addDockWidget(LEFT, first)
    # a pane tabbed behind another is shown only once it sits in its tab group: shown first, it
    # would be laid out and painted in a split of its own, then hidden behind the tab
    behind_tabs = {key for _, behind in ws.tabs for key in behind}
    for key in mine:
        if key not in behind_tabs:
            docks[key].show()
    placed = {ws.main}
    sizes: list[tuple[QDockWidget, QDockWidget, Qt.Orientation, float]] = []
    for a, b, orientation, share in ws.split:
        if a not in docks or b not in docks:
            continue
        if a not in placed:  # the recipe puts `a` before an already placed `b`
            window.splitDockWidget(docks[b], docks[a], orientation)
            window.splitDockWidget(docks[a], docks[b], orientation)
        else:
            window.splitDockWidget(docks[a], docks[b], orientation)
        placed |= {a, b}
        sizes.append((docks[a], docks[b], orientation, share))
    tab = tabify or window.tabifyDockWidget
    for anchor, behind in ws.tabs:
        if anchor not in docks:
            continue
        for key in behind:
            if key in docks:
                tab(docks[anchor], docks[key])
                docks[key].show()
        docks[anchor].raise_()
    for da, db, orientation, share in sizes:
        total = window.width() if orientation is H else window.height()
        window.resizeDocks([da, db], [int(total * share), int(total * (1 - share))], orientation)
    first.raise_()
