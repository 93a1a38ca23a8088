"""Qt-free work (compiler_core functions over the immutable session) on a worker thread.

For a pane rebuild that costs more than a slice of the event loop on a deep model (the
Decompositions table of a 32-layer Llama: ~0.5 s of CPU): the function runs on a worker and its
result is applied on the GUI thread. Only the latest submission's result is applied (a compile
switched twice shows the second). The worker holds the GIL while it computes, but CPython hands
it over every switch interval, so the GUI thread's turns stay short.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from PySide6.QtCore import QObject, Signal


class PieceQueue(Protocol):
    """What a worker needs of the window's update queue (update_queue.py imports this module)."""

    def post(self, owner: object, kind: str, work: Callable[[], None]) -> None: ...


class OffThread(QObject):
    """Signals: `done(int generation, object result)`, internal (queued to the GUI thread)."""

    done = Signal(int, object)

    def __init__(self, parent: QObject | None = None, name: str = "pane-work") -> None:
        super().__init__(parent)
        self.name = name
        self._closed = False
        self._pool = ThreadPoolExecutor(1, thread_name_prefix=name)
        self.generation = 0
        self._apply: Callable[[Any], None] | None = None
        # set by `UpdateQueue.track`: results are applied as queued pieces, not in the turn the
        # worker's signal arrives in (two results and a slice in one turn made a 80 ms turn)
        self.queue: PieceQueue | None = None
        self.done.connect(self._deliver)

    def submit(self, work: Callable[[], Any], apply: Callable[[Any], None]) -> None:
        if self._closed:
            return  # its window closed: a pane update queued before that has nowhere to show
        self.generation += 1
        generation = self.generation
        self._apply = apply
        # The job holds this object weakly, so a job still running when its window closes is
        # never what keeps the window's Qt objects alive: Qt objects must be released on the GUI
        # thread (a closed window's widgets destroyed on a worker deadlocked Qt against the GIL;
        # explorer/gc_policy.py has the cause and the cure).
        me = weakref.ref(self)

        def job() -> None:
            try:
                result: Any = work()
            except Exception as exc:  # re-raised on the GUI thread, where tests and users see it
                result = exc
            owner = me()
            if owner is not None:
                owner.done.emit(generation, result)

        self._pool.submit(job)

    def shutdown(self) -> None:
        """Drop any pending result and wait for the running job (its window is closing): no
        job outlives the objects it reports to."""
        self.cancel()
        self._closed = True
        self._pool.shutdown(wait=True, cancel_futures=True)

    def cancel(self) -> None:
        """Drop the pending submission's result (what it was for is gone)."""
        self.generation += 1
        self._apply = None

    def busy(self) -> bool:
        return self._apply is not None

    def _deliver(self, generation: int, result: Any) -> None:
        if generation != self.generation or self._apply is None:
            return
        apply, self._apply = self._apply, None
        if isinstance(result, Exception):
            raise result
        if self.queue is not None:  # a piece of the window's update queue, within its turn budget
            self.queue.post(self, "deliver", lambda: self._apply_if_current(generation, apply, result))
        else:
            apply(result)

    def _apply_if_current(self, generation: int, apply: Callable[[Any], None], result: Any) -> None:
        if generation == self.generation:  # not cancelled or superseded while queued
            apply(result)
