"""The job service's two pools (explorer/jobs.py): computing jobs run at most COMPUTE_THREADS at
a time, beside the GUI thread; a lane that waits (a re-run's capture process) has a pool of its
own, so its waiting neither counts against that bound nor holds a computing job back."""

from __future__ import annotations

import threading
import time
from typing import Any

from explorer import jobs
from explorer.jobs import Lane


def test_computing_jobs_run_at_most_compute_threads_at_once(qtbot: Any) -> None:
    lock = threading.Lock()
    running, most, done = [0], [0], []

    def work() -> None:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.05)
        with lock:
            running[0] -= 1

    lanes = [Lane(name=f"compute-{i}") for i in range(jobs.COMPUTE_THREADS + 3)]
    for lane in lanes:
        lane.submit(work, done.append)
    qtbot.waitUntil(lambda: len(done) == len(lanes), timeout=10_000)
    assert most[0] == jobs.COMPUTE_THREADS


def test_a_waiting_lane_does_not_hold_computing_jobs_back(qtbot: Any) -> None:
    gate = threading.Event()
    waiting = [Lane(name=f"waits-{i}", waits=True) for i in range(jobs.COMPUTE_THREADS + 1)]
    for lane in waiting:
        lane.submit(gate.wait, lambda _: None)
    done: list[int] = []
    computing = Lane(name="compute")  # held: a job holds its lane only weakly
    computing.submit(lambda: 42, done.append)
    try:
        qtbot.waitUntil(lambda: done == [42], timeout=10_000)
    finally:
        gate.set()
    qtbot.waitUntil(lambda: not any(lane.busy() for lane in waiting), timeout=10_000)
