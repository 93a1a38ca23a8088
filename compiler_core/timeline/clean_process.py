"""Is this process fit to time steps in? What a capture could leave behind, checked before the
first timed block of a timeline (compiler_core/worker/timeline_job.py).

The timeline runs in a fresh interpreter, so each check should find nothing; a residue means the
process is not what the timing assumes, and the timeline stops with an error that names it
rather than showing numbers a user's own loop would not reproduce.
"""

from __future__ import annotations

import sys

# Modules that hold a capture's state (trace handler, stage recorders, config patches, records):
# a timing process never imports them.
CAPTURE_MODULES = (
    "compiler_core.capture.hooks.trace_sink",
    "compiler_core.capture.hooks.stage_hooks",
    "compiler_core.capture.hooks.recording_backend",
    "compiler_core.capture.hooks.inspect_config",
    "compiler_core.capture.hooks.decomp_capture",
    "compiler_core.capture.hooks.autotune_capture",
    "compiler_core.capture.hooks.post_grad_store",
    "compiler_core.capture.hooks.aot_replay",
    "compiler_core.capture.break_profile",
    "compiler_core.worker.capture_job",
)
CHECKS = ("torch function modes, dispatch modes, a running profiler, saved-tensor hooks, Dynamo's "
          "frame callback, frames compiled earlier, sys trace/profile functions, sys.monitoring "
          "tools, capture modules")


class ResidueError(RuntimeError):
    """The timing process holds state that would slow or skew every step."""

    def __init__(self, found: list[str]) -> None:
        self.found = found
        super().__init__("the timing process is not clean, so its step times would not be the "
                         "user's: " + "; ".join(found))


def residue() -> list[str]:
    """What of CHECKS this process holds, in words (empty: clean)."""
    from compiler_core.capture.hooks import process_state as state

    found = []
    if state.function_modes():
        found.append(f"{state.function_modes()} torch function mode(s) on the stack")
    if state.dispatch_modes():
        found.append(f"{state.dispatch_modes()} torch dispatch mode(s) on the stack")
    if state.profiler_enabled():
        found.append("the torch profiler is running")
    if state.saved_tensor_hooks():
        found.append("saved-tensor hooks are installed")
    if state.eval_frame_callback():
        found.append("Dynamo's frame callback is installed outside a compiled call")
    if state.frames_compiled():
        found.append(f"{state.frames_compiled()} frame(s) were compiled in this process before")
    if sys.gettrace() is not None:
        found.append(f"a trace function is set ({sys.gettrace()!r})")
    if sys.getprofile() is not None:
        found.append(f"a profile function is set ({sys.getprofile()!r})")
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is not None:
        tools = [monitoring.get_tool(i) for i in range(6) if monitoring.get_tool(i)]
        if tools:
            found.append(f"sys.monitoring tools in use: {', '.join(map(str, tools))}")
    loaded = [m for m in CAPTURE_MODULES if m in sys.modules]
    if loaded:
        found.append(f"capture modules loaded: {', '.join(loaded)}")
    return found
