"""The GUI's one service for background work: one thread pool, results back on the GUI thread.

Every piece of Qt-free work the window does off the GUI thread goes through here: pane rebuilds
over the immutable session, graph layouts, loading and importing sessions, the live re-import
of a running script, comparisons, the start-up warm-up. Work is a plain callable over plain data
(sessions, graphs, paths; never a QWidget) and its result is plain data, applied on the GUI
thread from a queued signal.

A `Lane` is one owner's sequence of jobs (a pane, a canvas, the loader). Each submission takes
a token: the lane's generation and, for a lane bound to the shown session, that session. A
result is applied only while its token is current: not after a newer submission (a compile
switched twice shows the second), not after `cancel`, and not once another session is shown.
A serial lane (the default) runs one job at a time and keeps only the latest waiting one: the
results it would drop are never computed, and jobs sharing a cache (a `CompoundLayout`) never
overlap.

Why one pool, and why jobs are held by id: Qt objects must be released on the GUI thread. A
closed window's widgets destroyed on a worker deadlock Qt against the GIL (`~QObject` takes a
signal-slot mutex, then waits for the GIL the GUI thread holds while it waits for that mutex;
explorer/gc_policy.py has the collector's side of it). A job's callable often closes over its
pane; were the worker the last to hold it, the pane would die there. So the worker only borrows
a job from the service's table and the GUI thread drops it after delivery: whatever a job holds
is released on the GUI thread.

Why two pools: jobs that compute (pure Python: imports, layouts, pane tables, lexing) share the
GIL with the GUI thread, which must take it back for every call from Qt into Python. With each
more computing thread the GUI thread's turns take longer on the wall clock for the same CPU, so
at most COMPUTE_THREADS of them run at once (two: a log opened while another imports is not
held behind it, and the panes' jobs still get a thread); the rest queue. Jobs that wait (a
re-run waits minutes on its capture process) get a pool of their own, so waiting never holds a
computing job back. A lane says which it is (`waits=True`). While computing jobs run, the
collector's passes wait for them (explorer/gc_policy.py says why).

Signals (`JobService`): `_finished(int job_id)`, internal, queued from a worker to the GUI thread.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

from PySide6.QtCore import QCoreApplication, QObject, Signal

from explorer import gc_policy

COMPUTE_THREADS = 2
WAITING_THREADS = 4


class PieceQueue(Protocol):
    """What a lane needs of the window's update queue (update_queue.py imports this module)."""

    def post(self, owner: object, kind: str, work: Callable[[], None]) -> None: ...


@dataclass(eq=False)
class _Job:
    work: Callable[[], Any]
    lane: weakref.ref[Lane] | None  # None: a detached job, its result dropped, its error raised
    generation: int
    session: object = None
    computes: bool = True  # run on the computing pool: the collector's passes wait for it
    result: Any = None
    error: BaseException | None = None
    future: Future[None] | None = field(default=None, repr=False)


class JobService(QObject):
    """The process's pool. Use `service()`; lanes are the usual way in."""

    _finished = Signal(int)

    def __init__(self) -> None:
        super().__init__()
        self._compute = ThreadPoolExecutor(COMPUTE_THREADS, thread_name_prefix="compilescope-job")
        self._wait = ThreadPoolExecutor(WAITING_THREADS, thread_name_prefix="compilescope-wait")
        self._jobs: dict[int, _Job] = {}  # touched on the GUI thread, only read by workers
        self._ids = itertools.count(1)
        self._finished.connect(self._deliver)

    def start(self, job: _Job, waits: bool = False) -> Future[None]:
        job_id = next(self._ids)
        self._jobs[job_id] = job
        job.computes = not waits
        if job.computes:
            gc_policy.work_started()
        future = (self._wait if waits else self._compute).submit(self._run, job_id)
        job.future = future
        return future

    def run_detached(self, work: Callable[[], Any]) -> Future[None]:
        """Fire and forget (warm-up, a file export): nothing comes back but an exception, which
        is raised on the GUI thread."""
        return self.start(_Job(work, None, 0))

    def _run(self, job_id: int) -> None:
        # Worker thread. Every reference taken here is a local, gone before the signal: the
        # service's table keeps the job (and what its callable holds) alive until the GUI
        # thread has delivered it.
        job = self._jobs[job_id]
        try:
            job.result = job.work()
        except Exception as exc:  # re-raised on the GUI thread, where tests and users see it
            job.error = exc
        del job
        self._finished.emit(job_id)

    def _deliver(self, job_id: int) -> None:
        job = self._jobs.pop(job_id)
        if job.computes:
            gc_policy.work_done()
        lane = job.lane() if job.lane is not None else None
        if lane is not None:
            lane._finished(job)
        elif job.lane is None and job.error is not None:
            raise job.error


_service: JobService | None = None


def service() -> JobService:
    """The process's job service, made on first use; its deliveries run on the application's
    thread wherever it was first asked for."""
    global _service
    if _service is None:
        _service = JobService()
        app = QCoreApplication.instance()
        if app is not None and _service.thread() is not app.thread():
            _service.moveToThread(app.thread())
    return _service


class Lane(QObject):
    """One owner's jobs, applied in submission order on the GUI thread while their token is
    current. `current` (optional) names what a result is for, usually the shown session: a
    result computed for another is dropped. Signals: none (delivery goes through the service).
    """

    def __init__(self, parent: QObject | None = None, name: str = "pane-work", *,
                 current: Callable[[], object] | None = None, serial: bool = True,
                 waits: bool = False) -> None:  # fmt: skip
        super().__init__(parent)
        self.name = name
        self.generation = 0
        self._current = current
        self._serial = serial
        self._waits = waits  # its jobs wait (on a process) rather than compute: the waiting pool
        self._closed = False
        self._apply: Callable[[Any], None] | None = None
        self._on_error: Callable[[BaseException], None] | None = None
        self._running: list[Future[None]] = []
        self._waiting: _Job | None = None  # serial lane: the latest job waiting for the running one
        # set by `UpdateQueue.track`: results are applied as queued pieces, not in the turn the
        # worker's signal arrives in (two results and a slice in one turn make too long a turn)
        self.queue: PieceQueue | None = None

    def submit(self, work: Callable[[], Any], apply: Callable[[Any], None],
               on_error: Callable[[BaseException], None] | None = None) -> int:  # fmt: skip
        """Run `work` on the pool, then `apply(result)` on the GUI thread if still current.
        An exception is given to `on_error`, else raised on the GUI thread. Returns the token's
        generation."""
        if self._closed:
            return self.generation  # its window closed: an update queued before that is dropped
        self.generation += 1
        self._apply, self._on_error = apply, on_error
        session = self._current() if self._current is not None else None
        job = _Job(work, weakref.ref(self), self.generation, session)
        if self._serial and self._running:
            self._waiting = job  # replaces an older waiting job, whose result would be dropped
        else:
            self._running.append(service().start(job, self._waits))
        return self.generation

    def cancel(self) -> None:
        """Drop the pending submission's result (what it was for is gone)."""
        self.generation += 1
        self._apply = self._on_error = None
        self._waiting = None

    def busy(self) -> bool:
        """A submission whose result is not yet applied or dropped."""
        return self._apply is not None

    def shutdown(self) -> None:
        """Drop any pending result and wait for the running jobs (their window is closing): no
        job outlives the objects it reports to."""
        self.cancel()
        self._closed = True
        for future in list(self._running):
            future.result()

    def _finished(self, job: _Job) -> None:
        if job.future in self._running:
            self._running.remove(job.future)
        if self._waiting is not None and not self._running:
            waiting, self._waiting = self._waiting, None
            self._running.append(service().start(waiting, self._waits))
        if job.generation != self.generation or self._apply is None:
            return
        if self._current is not None and self._current() is not job.session:
            self._apply = self._on_error = None  # computed for a session no longer shown
            return
        apply, on_error = self._apply, self._on_error
        self._apply = self._on_error = None
        if job.error is not None:
            if on_error is None:
                raise job.error
            on_error(job.error)
            return
        result, generation = job.result, job.generation
        if self.queue is not None:  # a piece of the window's update queue, within its turn budget
            self.queue.post(self, "deliver", lambda: self._apply_if_current(generation, apply, result))
        else:
            apply(result)

    def _apply_if_current(self, generation: int, apply: Callable[[Any], None], result: Any) -> None:
        if generation == self.generation:  # not cancelled or superseded while queued
            apply(result)
