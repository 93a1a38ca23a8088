"""Layout work that may run off the GUI thread, and the bridge that hands results back.

Everything here is numpy or QPainterPath (reentrant), never a QWidget, so it is safe in a worker
thread. One single-thread executor runs jobs in order, which also serialises use of a
`CompoundLayout`'s cache. Results return through a queued signal, tagged with a generation so a
stale layout (the user switched graphs meanwhile) is dropped.

While a job runs the cyclic garbage collector is paused: a full collection triggered by the
worker's allocations walks every object of a 50k-node session with the GIL held (100-130 ms,
measured), which the window would feel as a freeze. Layout makes no reference cycles worth
collecting. The interpreter's thread switch interval is also cut fiftyfold: every call from Qt
into Python (a slot, a paint, each virtual a Python widget overrides) takes the GIL afresh, and
with a busy worker each take waits up to one interval (the "convoy effect"). In the main window
a 50k-node layout stalled the event loop 100 ms at the default 5 ms interval, 12 ms at 0.1 ms;
the layout itself is no slower. Both return to normal with the last pending job.

Signals (`LayoutRunner`): `finished(int generation, object result)`, result a `LayoutResult` or
the exception the job raised.
"""

from __future__ import annotations

import gc
import sys
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from PySide6.QtCore import QObject, Signal

from explorer.canvas.scene_paths import ScenePaths, build_paths
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


_SWITCH_WHILE_LAYING_OUT = 0.0001  # seconds; CPython's default is 0.005
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


class _QuietInterpreter:
    """Collector paused and short thread switches while any canvas has layout pending (see
    above); one per process, counted, since every canvas shares the interpreter."""

    def __init__(self) -> None:
        self.depth = 0
        self._gc_was_enabled = False
        self._switch = sys.getswitchinterval()

    def enter(self) -> None:
        self.depth += 1
        if self.depth > 1:
            return
        self._gc_was_enabled = gc.isenabled()
        gc.freeze()  # today's objects (the session) leave the collector's reach for good
        gc.disable()
        self._switch = sys.getswitchinterval()
        sys.setswitchinterval(_SWITCH_WHILE_LAYING_OUT)

    def leave(self) -> None:
        if self.depth == 0:
            return
        self.depth -= 1
        if self.depth > 0:
            return
        sys.setswitchinterval(self._switch)
        # The layout's own objects are long-lived too; left young, the first collection after
        # resuming would walk them all on the GUI thread (26 ms, measured).
        gc.freeze()
        if self._gc_was_enabled:
            gc.enable()


_QUIET = _QuietInterpreter()


class LayoutRunner(QObject):
    finished = Signal(int, object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="graph-layout")
        self.generation = 0
        self.pending = 0
        self._quiet = False

    def submit(self, job: Callable[[], LayoutResult]) -> int:
        self.generation += 1
        self.pending += 1
        if not self._quiet:
            self._quiet = True
            _QUIET.enter()
        gen = self.generation
        fut = self._pool.submit(job)
        fut.add_done_callback(lambda f: self._done(gen, f))
        return gen

    def settle(self) -> None:
        """Account for one finished job (GUI thread); the collector resumes after the last."""
        self.pending -= 1
        if self.pending == 0:
            self._leave_quiet()

    def _done(self, gen: int, fut: Future[LayoutResult]) -> None:
        # Runs in the worker thread; the signal is queued to the receiver's (GUI) thread.
        err = fut.exception()
        self.finished.emit(gen, err if err is not None else fut.result())

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._leave_quiet()

    def _leave_quiet(self) -> None:
        if self._quiet:
            self._quiet = False
            _QUIET.leave()
