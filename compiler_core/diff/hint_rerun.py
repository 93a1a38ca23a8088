"""Apply a hint and re-run: the same model file captured again with the hint, then compared.

`rerun_with_hint(model, hint)` captures the file as it is (unless the caller passes the session
it already has), captures it again in a fresh worker with the hint's plan (hint_plan.py: an
environment and the capture's mode/dynamic options), and diffs the two. A script run (`base` a
`ScriptSpec`, as `python -m compiler_core run` makes) re-runs the same way, with the hints torch
reads from the environment; its mode and `dynamic` are the script's own `torch.compile` call's.
Both captures go through the one worker client the CLI and GUI use
(compiler_core/worker/client.py), so the re-run is killed, capped and recovered like any
capture. Torch is never imported here.

A blocking call (two captures, tens of seconds even for a small model on a CPU): the GUI runs it off the
GUI thread, the CLI and tests call it directly.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
from dataclasses import dataclass
from pathlib import Path

from compiler_core.diff.diff_result import SessionDiff
from compiler_core.diff.hint_plan import Hint, RerunPlan, plan_for
from compiler_core.diff.session_diff import diff_sessions, mode_diff
from compiler_core.queries.step_stats import EAGER, shown_stats
from compiler_core.run.spec import ScriptSpec
from compiler_core.session.codec import load
from compiler_core.session.model import Session
from compiler_core.worker.client import WorkerClient
from compiler_core.worker.protocol import MODES, CaptureSpec


class RerunError(Exception):
    """The hint has no mechanical plan, or a capture failed: `str()` says which, in one line."""


@dataclass(frozen=True)
class Rerun:
    plan: RerunPlan
    before: Session
    after: Session
    diff: SessionDiff


def spec_of(session: Session) -> CaptureSpec:
    """How `session` was captured, as far as its meta says, for capturing its file again: a
    script run's arguments, working directory, step limit and ranks; a model file's mode,
    `dynamic`, train choice and input steps. The device is `cpu` or else CUDA (`cuda` for a model
    file, `auto` for a script): the meta holds the device's name, not its index."""
    meta, extra = session.meta, session.meta.extra
    on_cpu = meta.device in ("", "cpu")
    if meta.origin == "script":
        steps = extra.get("max_steps", "")
        return ScriptSpec(model_path=meta.origin_path, out_path="", device="cpu" if on_cpu else "auto",
                          script_args=tuple(shlex.split(extra.get("args", ""))), cwd=extra.get("cwd", ""),
                          max_steps=int(steps) if steps.isdigit() else None,
                          nproc=int(extra.get("nproc", "1")) if extra.get("nproc", "1").isdigit() else 1)
    inputs = extra.get("input_steps", "")
    # a timeline is timed again, the same steps and modes, so the comparison has step times
    timed = [m for m in session.mode_stats if m.mode != EAGER and m.samples]
    timeline_steps = max((m.samples for m in session.mode_stats if m.samples), default=0)
    return CaptureSpec(model_path=meta.origin_path, out_path="", device="cpu" if on_cpu else "cuda",
                       mode=meta.mode if meta.mode in MODES else None, dynamic=meta.dynamic, train=meta.train,
                       input_steps=int(inputs) if inputs.isdigit() else CaptureSpec.input_steps,
                       steps=timeline_steps if timed else 0,
                       modes=",".join(m.mode for m in timed) or CaptureSpec.modes)


def capture(spec: CaptureSpec, env: dict[str, str] | None = None, timeout_s: float | None = None,
            cache_dir: str | Path | None = None) -> Session:  # fmt: skip
    """Run one capture worker to its end with `env` added to this process's environment."""
    client = WorkerClient(spec, timeout_s=timeout_s, cache_dir=cache_dir, env={**os.environ, **(env or {})})
    for _ in client.events():
        pass
    if not client.succeeded:
        problems = client.problems()
        if problems:
            why = problems[0]
        elif client.error is not None and client.error.message:
            why = client.error.message.splitlines()[0]
        else:
            why = f"the worker {client.exit.describe() if client.exit else 'did not start'}"
        raise RerunError(f"capture of {spec.model_path} failed: {why}")
    return load(client.session_path)


def rerun_with_hint(
    model_path: str,
    hint: Hint,
    out_dir: str | Path,
    before: Session | None = None,
    base: CaptureSpec | None = None,
    timeout_s: float | None = None,
    cache_dir: str | Path | None = None,
) -> Rerun:
    """Capture `model_path` with `hint` applied and diff it against `before` (captured here
    first, with `base`'s options, when not given). `out_dir` receives both sessions and their
    trace logs (`before.json`, `after.json`). `cache_dir` is the Inductor cache both runs
    share (default: CompileScope's); a warm cache only skips recompiling identical kernels."""
    plan = plan_for(hint)
    if plan is None:
        raise RerunError(f"{hint.in_words()} needs a change to the code: there is nothing to apply "
                         "mechanically")
    out = Path(out_dir)
    spec = base or CaptureSpec(model_path=str(Path(model_path).resolve()), out_path="")
    if isinstance(spec, ScriptSpec) and (plan.mode is not None or plan.dynamic is not None):
        raise RerunError(f"{hint.in_words()}: a script's own torch.compile call sets this; change it there "
                         "(a re-run applies only settings torch reads from the environment)")
    if before is None:
        first = dataclasses.replace(spec, out_path=str(out / "before.json"), trace_path="")
        before = capture(first, timeout_s=timeout_s, cache_dir=cache_dir)
    # a mode hint times the hinted mode where the first run timed its own compiled mode
    before_mode = spec.mode or "default"
    modes = spec.modes
    if plan.mode is not None and spec.steps > 0:
        modes = ",".join(dict.fromkeys(plan.mode if m == before_mode else m for m in modes.split(",")))
    second = dataclasses.replace(
        spec, out_path=str(out / "after.json"), trace_path="",
        mode=plan.mode if plan.mode is not None else spec.mode,
        dynamic=plan.dynamic if plan.dynamic is not None else spec.dynamic,
        modes=modes,
    )
    after = capture(second, plan.env, timeout_s=timeout_s, cache_dir=cache_dir)
    diff = diff_sessions(before, after)
    if plan.mode is not None:
        diff = with_mode_change(diff, before, after, before_mode, plan.mode)
    return Rerun(plan, before, after, diff)


def with_mode_change(diff: SessionDiff, before: Session, after: Session, old: str, new: str) -> SessionDiff:
    """The step-time comparison a mode hint is about: `old` timed before against `new` timed
    after, as one more row (the per-mode rows only pair a mode with itself). Unchanged when
    either run did not time its mode."""
    a = next((m for m in shown_stats(before) if m.mode == old and m.samples), None)
    b = next((m for m in shown_stats(after) if m.mode == new and m.samples), None)
    if a is None or b is None or old == new:
        return diff
    return dataclasses.replace(diff, modes=(*diff.modes, mode_diff(f"{old} → {new}", a, b)))
