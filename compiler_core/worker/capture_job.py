"""One capture, start to finish, inside the worker process: load, run, build, save, report.

Whatever happens in the user's code, the job ends by building a session from whatever the trace
log holds (a model that fails in backward still has its Dynamo graph and forward kernels) and
saving it, with the failure as an error diagnostic. Only a dead process skips that; then the
client rebuilds from the same log (`WorkerClient.recover_session`).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from compiler_core.capture.session_build import build_session, read_sources, user_files
from compiler_core.capture.user_errors import FailureReport, describe_failure
from compiler_core.session.codec import save
from compiler_core.session.model import Diagnostic, SessionMeta
from compiler_core.worker import protocol
from compiler_core.worker.protocol import CaptureSpec, Event

Emit = Callable[[Event], None]


class CaptureJob:
    def __init__(self, spec: CaptureSpec, emit: Emit, memory_note: str = "") -> None:
        self.spec = spec
        self._emit = emit
        self._t0 = time.monotonic()
        self._stage_start: dict[str, float] = {}
        self.failure: FailureReport | None = None
        self.failed_stage = ""
        self.timeline_pending = False
        self.facts: dict[str, Any] = {"memory_cap": memory_note} if memory_note else {}

    def clock(self) -> float:
        return round(time.monotonic() - self._t0, 4)

    def emit(self, event: Event) -> None:
        self._emit(event)

    def stage(self, name: str, state: str) -> None:
        elapsed = None
        if state == "started":
            self._stage_start[name] = time.monotonic()
        else:
            elapsed = round(time.monotonic() - self._stage_start.pop(name, time.monotonic()), 4)
        self._emit(Event("stage", t=self.clock(), stage=name, state=state, elapsed_s=elapsed))

    def run(self) -> int:
        """Capture, build and save. With `steps`, a successful capture leaves the timeline to a
        fresh process (`timeline_pending`; worker_main execs timeline_job), which announces the
        session once it holds the timeline too."""
        from compiler_core.capture.hooks import check_torch_version
        from compiler_core.capture.hooks.hint_config import hinted_config
        from compiler_core.capture.hooks.stage_hooks import stage_recorders
        from compiler_core.capture.hooks.trace_sink import TraceLogSink
        from compiler_core.worker.stage_tracker import StageTracker

        # A torch outside a private hook's tested range: a note in the session, capture anyway.
        self.facts.setdefault("notes", []).extend(check_torch_version())
        trace_path = Path(self.spec.resolved_trace_path)
        tracker = StageTracker(self._emit, self.clock)
        code = protocol.EXIT_OK
        with TraceLogSink(trace_path, observer=tracker), stage_recorders():
            try:
                with hinted_config() as settings:  # a re-run's hint (diff/hint_plan.py), else nothing
                    self.facts["settings"] = settings
                    model_spec = self._load()
                    self._compile_and_run(model_spec)
            except BaseException as exc:  # user code may raise anything, SystemExit included
                failed_in = tracker.current or self._running_stage()
                tracker.finish("failed")
                code = self._fail(exc, failed_in)
                if isinstance(exc, KeyboardInterrupt):
                    raise
        timeline = code == protocol.EXIT_OK and self.spec.steps > 0
        code = self._build_and_save(trace_path, code, announce=not timeline)
        self.timeline_pending = timeline and code == protocol.EXIT_OK
        return code

    def _running_stage(self) -> str:
        return next(reversed(self._stage_start), "load") if self._stage_start else "load"

    def _load(self) -> Any:
        from compiler_core.modelfile import load_model_file

        self.stage("load", "started")
        from compiler_core.modelfile import with_train_choice

        spec = load_model_file(self.spec.model_path, device=self.spec.device)
        spec = with_train_choice(spec, self.spec.train)
        self.stage("load", "finished")
        return spec

    def _compile_and_run(self, model_spec: Any) -> None:
        from compiler_core.capture.model_run import compile_and_run

        compile_and_run(model_spec, self.spec.device, self.spec.mode, self.spec.dynamic,
                        self.spec.input_steps, self.stage, self.facts)

    def _fail(self, exc: BaseException, stage: str) -> int:
        from compiler_core.modelfile import ModelFileError, UnsupportedDeviceError

        if stage in self._stage_start:
            self.stage(stage, "failed")
        for open_stage in list(self._stage_start):
            self.stage(open_stage, "failed")
        report = describe_failure(exc)
        if isinstance(exc, SystemExit):
            report = _system_exit_report(exc, report)
        self.failure, self.failed_stage = report, stage
        self._emit(Event.failure(report, stage, self.clock()))
        if isinstance(exc, UnsupportedDeviceError):
            return protocol.EXIT_UNSUPPORTED_DEVICE
        if isinstance(exc, ModelFileError):
            return protocol.EXIT_USAGE
        return protocol.EXIT_USER_ERROR

    def _build_and_save(self, trace_path: Path, code: int, announce: bool = True) -> int:
        partial = code != protocol.EXIT_OK
        self.stage("build", "started")
        try:
            session = build_session(trace_path, self._meta(), self._sources(), self._diagnostics())
            if self.facts.get("eager_gaps"):
                session = dataclasses.replace(session, eager_gaps=dict(self.facts["eager_gaps"]))
            self.stage("build", "finished")
            self.stage("save", "started")
            save(session, self.spec.out_path)
            self.stage("save", "finished")
        except Exception as exc:
            failed = "save" if "save" in self._stage_start else "build"
            self._fail(exc, failed)
            return code if partial else protocol.EXIT_BUILD_FAILED
        if not announce:
            return code
        self._emit(Event("session", t=self.clock(), path=str(Path(self.spec.out_path).resolve()),
                         data={"trace": str(trace_path), "partial": partial,
                               "compiles": len(session.compiles)}))
        return code

    def _meta(self) -> SessionMeta:
        return capture_meta(self.spec, self.facts)

    def _sources(self) -> dict[str, str]:
        from compiler_core.capture.hooks.interned_strings import intern_table

        return read_sources([self.spec.model_path, *user_files(intern_table())])

    def _diagnostics(self) -> list[Diagnostic]:
        found = [Diagnostic("info", text, self.spec.model_path, stage="run")  # a notice, not damage
                 for text in self.facts.get("notes", ())]
        found += [Diagnostic("warning", text, self.spec.model_path, stage="run")
                  for text in self.facts.get("warnings", ())]
        if self.failure is not None:
            found.append(Diagnostic("error", self.failure.message + "\n" + self.failure.user_traceback,
                                    self.spec.model_path, stage=self.failed_stage))
        return found


def capture_meta(spec: CaptureSpec, facts: dict[str, Any]) -> SessionMeta:
    """Session meta for a capture; `facts` holds what the run learnt (empty after a crash)."""
    extra = {k: str(v) for k, v in facts.get("flags", {}).items()}
    extra.update(facts.get("settings", {}))
    extra["input_steps"] = str(spec.input_steps)
    if facts.get("memory_cap"):
        extra["memory_cap"] = str(facts["memory_cap"])
    torch_version, device = _torch_facts(spec.device)
    dynamic = facts.get("dynamic", spec.dynamic)
    return SessionMeta(
        torch_version=torch_version, device=device, mode=str(facts.get("mode") or spec.mode or "default"),
        dynamic=dynamic if isinstance(dynamic, bool) else None, train=facts.get("train"),
        origin="capture", origin_path=str(Path(spec.model_path).resolve()), created_unix=time.time(),
        extra=extra,
    )


def _torch_facts(device: str) -> tuple[str, str]:
    import sys

    torch = sys.modules.get("torch")  # never import torch here: the client calls this too
    if torch is None:
        return "", device
    name = device
    if device.startswith("cuda") and torch.cuda.is_available():
        name = torch.cuda.get_device_name(torch.device(device))
    return str(torch.__version__), name


def _system_exit_report(exc: SystemExit, report: FailureReport) -> FailureReport:
    """sys.exit() in a model file is a failure too: the capture never got to finish."""
    from compiler_core.capture.user_errors import clip

    try:
        code = clip(repr(exc.code), 200)
    except BaseException:  # a user object's __repr__ may raise
        code = f"<{type(exc.code).__name__}>"
    message = f"SystemExit: the model file called sys.exit({code})"
    frames = report.user_traceback.rstrip("\n").rsplit("\n", 1)[0]
    return FailureReport("SystemExit", message, f"{frames}\n{message}\n", report.full_traceback)
