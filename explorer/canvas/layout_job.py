"""Layout work that may run off the GUI thread, and the bridge that hands results back.

Everything here is numpy or QPainterPath (reentrant), never a QWidget, so it is safe in a worker
thread. Jobs run as a serial lane of the GUI's job service (explorer/jobs.py), which also
serialises use of a `CompoundLayout`'s cache. Results come back on the GUI thread, tagged with a
generation so a stale layout (the user switched graphs meanwhile) is dropped.

The layout steers nothing process-wide: the collector and the thread switch interval are the
GUI's one interpreter policy (explorer/gc_policy.py), installed at start-up.

Signals (`LayoutRunner`): `finished(int generation, object result)`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from PySide6.QtCore import QObject, QTimer, Signal

from explorer.canvas.scene_paths import ScenePaths, build_paths
from explorer.jobs import Lane
from explorer.layout import CompoundLayout, GraphArrays, GroupTree, Scene, build_groups


@dataclass
class LayoutResult:
    arrays: GraphArrays
    tree: GroupTree
    layout: CompoundLayout
    expanded: set[int]
    scene: Scene
    paths: ScenePaths
    index: dict[str, int]
    op_color: NDArray[np.int64]  # default fill slot per node, by op
    seconds: float = 0.0


_OP_SLOT = {"placeholder": 1, "get_attr": 2, "output": 3}


def full_layout(make_arrays: Callable[[], GraphArrays], item_limit: int) -> LayoutResult:
    """Everything from session graph to drawable paths; safe off the GUI thread."""
    t = time.perf_counter()
    arrays = make_arrays()
    tree = build_groups(arrays)
    layout = CompoundLayout(arrays, tree)
    res = relayout(arrays, tree, layout, tree.default_expanded(item_limit), None)
    res.seconds = time.perf_counter() - t
    return res


def relayout(
    arrays: GraphArrays,
    tree: GroupTree,
    layout: CompoundLayout,
    expanded: set[int],
    previous: LayoutResult | None,
) -> LayoutResult:
    t = time.perf_counter()
    scene = layout.scene(expanded)
    paths = build_paths(scene, tree.depth)
    if previous is not None:
        index, op_color = previous.index, previous.op_color
    else:
        index = arrays.index()
        op_color = np.asarray([_OP_SLOT.get(n.op, 0) for n in arrays.nodes], dtype=np.int64)
    res = LayoutResult(arrays, tree, layout, expanded, scene, paths, index, op_color)
    res.seconds = time.perf_counter() - t
    return res


class LayoutRunner(QObject):
    """A canvas's layouts as a serial lane of the job service: one runs at a time (they share
    the `CompoundLayout`'s cache) and only the latest waiting one runs after it.

    Signals: `finished(int generation, object result)`, on the GUI thread, result a
    `LayoutResult` or the exception the job raised.
    """

    finished = Signal(int, object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._lane = Lane(self, "graph-layout")
        self._ready: tuple[int, object] | None = None  # a result waiting for its own turn
        self._deliver = QTimer(self)
        self._deliver.setSingleShot(True)
        self._deliver.setInterval(0)
        self._deliver.timeout.connect(self._emit)
        self.generation = 0  # also counts the canvas's synchronous layouts, which drop older results

    def submit(self, job: Callable[[], LayoutResult]) -> int:
        self.generation += 1
        gen = self.generation
        self._lane.submit(job, lambda res: self._hand_back(gen, res), lambda exc: self._hand_back(gen, exc))
        return gen

    def _hand_back(self, gen: int, result: object) -> None:
        # In a turn of its own: a result arrives with the other posted events (a workspace
        # switch's resizes and paint, other panes' results), and installing a deep graph's
        # layout in that same turn would add its cost to theirs before input is read again.
        # A timer, not a zero-delay single shot, which Qt posts as one more of those events.
        self._ready = (gen, result)
        self._deliver.start()

    def _emit(self) -> None:
        if self._ready is not None:
            (gen, result), self._ready = self._ready, None
            self.finished.emit(gen, result)

    def busy(self) -> bool:
        """A submitted layout whose result has not been installed yet."""
        return self._lane.busy() or self._ready is not None

    def shutdown(self) -> None:
        self._lane.shutdown()
