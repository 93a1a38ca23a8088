"""Which steps compiled, recompiled or recorded a CUDA graph, how long that took and why.

Uses Dynamo's compile callbacks (`torch._dynamo.callback.on_compile_start/on_compile_end`,
stable since torch 2.6 with a `CallbackArgs(callback_trigger, compile_id)` argument): they fire
around every frame compile, lazy backward compile and cudagraph-trees recording, on the host,
synchronously, so the run loop can attribute each one to the step in progress. No trace-log
handler is installed, because that makes torch format every graph and inflates compile time.

Recompile reasons come from `torch._dynamo.utils.guard_failures` (code -> failure strings,
filled whenever a cache entry's guards fail, cleared by `torch._dynamo.reset()`); reasons that
appeared since the previous compile are the ones that caused this one.
`torch._dynamo.reset()` also clears the callbacks, so install after every reset.

Changes torch state (the two callback lists), so it is a context manager: `with watch:` installs
and on exit removes exactly the two callbacks it added (through the handler's own
`remove_start_callback`/`remove_end_callback`), leaving other callbacks alone. `install`/`remove`
stay for the run loops that reinstall after a reset.
"""

from __future__ import annotations

import time
from contextlib import suppress
from types import TracebackType
from typing import Any

from compiler_core.session.model import TimelineEvent

WARMUP_KINDS = ("compile", "recompile", "cudagraph_record")
TORCH_VERSIONS = ("2.11", "2.15")


class CompileWatch:
    """Collects TimelineEvents for one mode; `step` is set by the run loop before each step."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.step = 0
        self.cudagraph_records = 0
        self._t0: float | None = None
        self._seen: dict[int, int] = {}
        self._pending: list[TimelineEvent] = []
        self._installed = False

    def install(self) -> None:
        from torch._dynamo.callback import callback_handler

        callback_handler.register_start_callback(self._on_start)
        callback_handler.register_end_callback(self._on_end)
        self._new_reasons()  # anything already there predates this mode
        self._installed = True

    def remove(self) -> None:
        from torch._dynamo.callback import callback_handler

        if not self._installed:
            return
        for remove, cb in ((callback_handler.remove_start_callback, self._on_start),
                           (callback_handler.remove_end_callback, self._on_end)):
            with suppress(ValueError):  # already gone: a reset cleared the lists
                remove(cb)
        self._installed = False

    def is_installed(self) -> bool:
        """Still registered? A `torch._dynamo.reset()` (the script's own too) drops callbacks."""
        from torch._dynamo.callback import callback_handler

        return self._installed and self._on_start in callback_handler.start_callbacks

    def __enter__(self) -> CompileWatch:
        self.install()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.remove()

    def take(self) -> list[TimelineEvent]:
        """Events since the last call (all of them belong to the step just run)."""
        out, self._pending = self._pending, []
        return out

    def _on_start(self, args: Any = None) -> None:
        self._t0 = time.perf_counter()

    def _on_end(self, args: Any = None) -> None:
        duration = time.perf_counter() - self._t0 if self._t0 is not None else None
        self._t0 = None
        trigger = getattr(getattr(args, "callback_trigger", None), "name", "DYNAMO")
        compile_id = str(getattr(args, "compile_id", "") or "")
        kind, reason = self._classify(trigger, compile_id)
        if kind == "cudagraph_record":
            self.cudagraph_records += 1
            duration = None  # recording is part of running the step, not compile time
        self._pending.append(TimelineEvent(self.mode, self.step, kind, reason, duration))

    def _classify(self, trigger: str, compile_id: str) -> tuple[str, str]:
        if trigger == "CUDAGRAPH_RECORDING":
            return "cudagraph_record", f"CUDA graph recorded for compile {compile_id}"
        if trigger == "LAZY_BACKWARD":
            return "compile", f"backward of {compile_id} compiled on first use"
        reasons = self._new_reasons()
        if _is_recompile(compile_id):
            why = "; ".join(dict.fromkeys(reasons)) or "guards failed (reason not reported)"
            return "recompile", why
        return "compile", f"compile {compile_id}" if compile_id else "compile"

    def _new_reasons(self) -> list[str]:
        from torch._dynamo.utils import guard_failures

        fresh: list[str] = []
        for code, reasons in list(guard_failures.items()):
            seen = self._seen.get(id(code), 0)
            fresh += [str(r) for r in reasons[seen:]]
            self._seen[id(code)] = len(reasons)
        return fresh


def _is_recompile(compile_id: str) -> bool:
    """`0/1` is frame 0's second compile; `0/0` and `1/0` (a new frame after a break) are not."""
    tail = compile_id.strip("[]").split("_")[0].split("/")[-1]
    return tail.isdigit() and int(tail) > 0
