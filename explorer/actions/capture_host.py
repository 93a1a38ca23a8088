"""What the run controllers (timeline runs, script runs) use of the capture controller.

`FileActions` owns the worker and starts captures; `TimelineRuns` and `ScriptRuns` are built by
it and use it through this protocol, so neither imports file_actions back (the import runs one
way: file_actions -> timeline_runs / run_script -> capture_host).
"""

from __future__ import annotations

from typing import Protocol

from compiler_core.worker.capture_outcome import CaptureOutcome
from compiler_core.worker.protocol import CaptureSpec
from explorer.worker_process import WorkerProcess


class CaptureHost(Protocol):
    worker: WorkerProcess
    model_path: str  # the model file behind the shown session; "" for traces and sessions
    last_spec: CaptureSpec | None
    last_outcome: CaptureOutcome | None
    loading_capture: bool  # the finished run's session is still being loaded

    def default_spec(self, model_path: str) -> CaptureSpec: ...

    def start_capture(self, spec: CaptureSpec, show_progress: bool = True) -> None: ...

    def can_capture(self, path: str) -> bool: ...
