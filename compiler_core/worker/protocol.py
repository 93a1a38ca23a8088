"""The worker protocol: how to start a capture worker and what it reports. Torch- and Qt-free.

Command line (run from any directory; the package must be importable)::

    python -m compiler_core.worker MODEL.py --out SESSION.json
        (--events-fd N | --events-file PATH) [--auth-stdin]
        [--device cpu|cuda] [--mode default|reduce-overhead|max-autotune|max-autotune-no-cudagraphs]
        [--dynamic | --no-dynamic] [--input-steps 4] [--steps 0] [--modes default] [--shape-change-step N]
        [--train | --no-train]  # default: the file decides (train_step present = training)
        [--trace PATH]          # default: SESSION.json with suffix .trace.log

Events channel. Events never travel on stdout/stderr, which belong to the user's code (it may
print megabytes, or crash half-way through a line). Every launcher (launch.py, which says why a
file) passes ``--events-file PATH``: the worker appends one line per event and flushes each, and
the parent tails the file. ``--events-fd N`` (an inherited descriptor) is how the worker hands
its open channel to its own fresh image (timeline_job.exec_timeline).

Each event is one line of JSON (UTF-8, ``\\n``-terminated): the fields of `Event` below, with
empty/default fields omitted. With ``--auth-stdin`` the worker first reads a hex key line from
stdin and each line becomes ``MAC SEQ JSON`` (see event_auth.py); the parent then believes only
lines that verify, and decides success from the session file, never from events alone.

Order: ``hello``, then ``stage`` events (``load``, ``run`` with
``dynamo``/``aot``/``inductor`` nested inside it per compile id, ``steps`` when input steps
run, ``timeline`` when --steps > 0, ``build``, ``save``), ``warning``s anywhere, at most one
``error``, then ``session`` (path of the saved session, also after a failure when something was
traced: ``partial`` true) and finally ``done``. A worker that dies (segfault, kill) just stops;
the client then rebuilds a partial session from the trace log, which is flushed per record.

Process: launch.py starts it in its own session/process group, so cancelling kills the whole
group, children included, with `worker_env()` (``TMPDIR`` and ``TORCHINDUCTOR_CACHE_DIR`` in
CompileScope's cache dir) and a run token. Its exit code is one of the ``EXIT_*`` values below;
death by signal shows as a negative return code.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from compiler_core.session.model import Diagnostic, Session

PROTOCOL_VERSION = 1

EXIT_OK = 0
EXIT_USER_ERROR = 1  # the model raised (at import, in forward/backward, or sys.exit != 0)
EXIT_USAGE = 2  # bad arguments, or the file is not a valid model file
EXIT_UNSUPPORTED_DEVICE = 3  # e.g. a `requires = "cuda"` example on a CPU-only machine
EXIT_INTERNAL = 4  # CompileScope itself failed (a bug: please report)
EXIT_BUILD_FAILED = 5  # the model ran but the session could not be built/saved

STAGES = ("load", "run", "dynamo", "aot", "inductor", "steps", "timeline", "build", "save")
EVENT_KINDS = ("hello", "stage", "warning", "error", "timeline", "session", "done", "rank", "budget")
STATES = ("started", "finished", "failed")
MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


@dataclass(frozen=True)
class Event:
    """One protocol line. `kind` says which fields matter:

    - hello: `pid`, `data` {python, protocol}
    - stage: `stage`, `state` (started|finished|failed), `compile_id` for dynamo/aot/inductor,
      `elapsed_s` on finished/failed; a script run's "run" stage end carries `data` {clocks}: the
      clock each callable was timed with (device "auto")
    - warning: `message`, `data` {category, file, line} (graph breaks: category "graph_break")
    - error: `stage`, `message` (exception type and the user's own message), `traceback`
      (frames in user code only, or the last frames if none), `data` {exc_type, full_traceback}
    - timeline: `data` = one record of compiler_core.timeline's run phase (mode_start, sample,
      timeline_event, mode_stats; see compiler_core/timeline/records.py), only with --steps > 0
    - session: `path`, `data` {trace, partial, compiles}
    - done: `exit_code`
    - rank: `pid`, `exit_code`, `data` {rank, state: started|finished}; only from a script run
      with --nproc > 1 (compiler_core/run/spec.py)
    """

    kind: str
    t: float = 0.0  # seconds since the worker started
    stage: str = ""
    state: str = ""
    compile_id: str = ""
    elapsed_s: float | None = None
    message: str = ""
    traceback: str = ""
    path: str = ""
    pid: int | None = None
    exit_code: int | None = None
    data: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "kind" or value not in ("", None, {}):
                out[f.name] = value
        return json.dumps(out, ensure_ascii=False, default=str)

    @staticmethod
    def failure(report: Any, stage: str, t: float = 0.0) -> Event:
        """The `error` event of a failure described by `capture.user_errors.describe_failure`
        (a FailureReport: message, the user's traceback, the exception type, the full one)."""
        return Event("error", t=t, stage=stage, message=report.message, traceback=report.user_traceback,
                     data={"exc_type": report.exc_type, "full_traceback": report.full_traceback})

    @staticmethod
    def from_json(line: str) -> Event:
        """Raises ValueError for anything but a JSON object whose fields have their types."""
        from compiler_core.trace.json_payload import parse_json

        raw = parse_json(line)
        if not isinstance(raw, dict):
            raise ValueError("an event is a JSON object")
        known = {f.name: f.type for f in fields(Event)}
        kept = {k: v for k, v in raw.items() if k in known}
        for key, value in kept.items():
            if not _FIELD_CHECKS.get(key, lambda v: isinstance(v, str))(value):
                raise ValueError(f"event field {key!r} has the wrong type")
        return Event(**kept)


def _num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


_FIELD_CHECKS: dict[str, Any] = {
    "t": _num,
    "elapsed_s": lambda v: v is None or _num(v),
    "pid": lambda v: v is None or (isinstance(v, int) and not isinstance(v, bool)),
    "exit_code": lambda v: v is None or (isinstance(v, int) and not isinstance(v, bool)),
    "data": lambda v: isinstance(v, dict),
}


@dataclass(frozen=True)
class CaptureSpec:
    """What to capture; `worker_argv` turns it into the command line above."""

    model_path: str
    out_path: str
    device: str = "cpu"
    mode: str | None = None  # None: the model file's compile_options, else "default"
    dynamic: bool | None = None
    input_steps: int = 4  # extra calls with make_inputs(step), when the file defines it
    steps: int = 0  # timeline run phase (compiler_core.timeline), 0 = none
    modes: str = "default"
    trace_path: str = ""
    shape_change_step: int | None = None  # timeline: feed a grown input shape from this step on
    max_memory_mb: int | None = None  # worker memory cap (0 = none; None: default, see memory_limit)
    train: bool | None = None  # None: the file decides; False: forward under no_grad; True: backward too
    # a memory-budget sweep instead of a capture ("1,0.5,0.2"): one `budget` event per value,
    # `steps` timed steps each; no session is written by the worker
    budgets: str = ""

    @property
    def resolved_trace_path(self) -> str:
        return self.trace_path or default_trace_path(self.out_path)

    @property
    def working_dir(self) -> str:
        """Where the worker starts: the model file's folder ("" = the caller's own)."""
        return str(Path(self.model_path).resolve().parent) if self.model_path else ""

    # Every worker signs its events (event_auth.py); a spec that did not would be believed on
    # its word (CaptureRun keeps that path for completeness).
    signed_events: ClassVar[bool] = True

    def argv(self, events_fd: int | None = None, events_file: str | None = None) -> list[str]:
        """The worker's command line; a script run's spec (compiler_core/run/spec.py) overrides it."""
        return worker_argv(self, events_fd=events_fd, events_file=events_file, auth_stdin=self.signed_events)

    def session_from_trace(self, notes: list[Diagnostic]) -> Session | None:
        """This run's session rebuilt from its trace log alone, with the run's meta and `notes`
        (crash recovery: capture_outcome.recover_session); None when the log is no file. A script
        run's spec (compiler_core/run/spec.py) rebuilds its own way, so the worker layer never
        imports the script runner. Never imports torch."""
        from compiler_core.capture.session_build import build_session, read_sources
        from compiler_core.worker.capture_job import capture_meta

        if not Path(self.resolved_trace_path).is_file():
            return None
        meta = capture_meta(self, {})
        return build_session(self.resolved_trace_path, meta, read_sources([self.model_path]), notes)


def default_trace_path(out_path: str) -> str:
    return str(Path(out_path).with_suffix(".trace.log"))


def worker_argv(spec: CaptureSpec, events_fd: int | None = None, events_file: str | None = None,
                auth_stdin: bool = False) -> list[str]:  # fmt: skip
    """Full argv (interpreter first) to start the worker for `spec`."""
    argv = [sys.executable, "-m", "compiler_core.worker", spec.model_path, "--out", spec.out_path,
            "--device", spec.device, "--input-steps", str(spec.input_steps), "--steps", str(spec.steps),
            "--modes", spec.modes, "--trace", spec.resolved_trace_path]
    if events_fd is not None:
        argv += ["--events-fd", str(events_fd)]
    if events_file is not None:
        argv += ["--events-file", events_file]
    if auth_stdin:
        argv.append("--auth-stdin")
    if spec.mode is not None:
        argv += ["--mode", spec.mode]
    if spec.max_memory_mb is not None:
        argv += ["--max-memory-mb", str(spec.max_memory_mb)]
    if spec.shape_change_step is not None:
        argv += ["--shape-change-step", str(spec.shape_change_step)]
    if spec.dynamic is not None:
        argv.append("--dynamic" if spec.dynamic else "--no-dynamic")
    if spec.train is not None:
        argv.append("--train" if spec.train else "--no-train")
    if spec.budgets:
        argv += ["--budgets", spec.budgets]
    return argv


def default_cache_dir() -> Path:
    """$COMPILESCOPE_CACHE_DIR, else the per-user cache dir (~/.cache/compilescope)."""
    explicit = os.environ.get("COMPILESCOPE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "compilescope"


def worker_env(base: dict[str, str] | None = None, cache_dir: str | Path | None = None) -> dict[str, str]:
    """Environment for the worker: Inductor's caches and temp files in CompileScope's own dir.

    Inductor's precompiled C++ header lands under $TMPDIR whatever TORCHINDUCTOR_CACHE_DIR says,
    so both point into `cache_dir` (kept across captures: the C++ compile cache makes warm
    captures fast; pass an empty dir for a cold one), trimmed to its size cap first.
    """
    from compiler_core.worker.cache_store import trim

    env = dict(os.environ if base is None else base)
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    trim(root)  # the cache stays under its cap (cache_store.py); before this run's files exist
    env["TORCHINDUCTOR_CACHE_DIR"] = str(root / "inductor")
    env["TMPDIR"] = str(root / "tmp")
    env["PYTHONUNBUFFERED"] = "1"
    for key in ("TORCHINDUCTOR_CACHE_DIR", "TMPDIR"):
        Path(env[key]).mkdir(parents=True, exist_ok=True)
    return env
