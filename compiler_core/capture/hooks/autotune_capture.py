"""Record every autotuned choice Inductor benchmarks (max-autotune GEMMs, CPU C++ templates...).

Official hook: `torch._inductor.select_algorithm.add_feedback_saver(fn)`. Inductor calls `fn`
after benchmarking one operation with `(timings, name, input_nodes, choices, ...)`: torch 2.11
passes four arguments, later versions add a profiling thunk and precompile times, so we accept
`*rest`. `timings` maps each `ChoiceCaller` to milliseconds, `inf` for a candidate that failed
(Inductor logs why on `torch._inductor.select_algorithm` — "out of resource: shared memory",
compile errors — so a handler on that logger catches the reason and we attach it to the failed
candidates of the same operation). Total tuning time is not passed to the saver; we measure the
wall time since the previous tuned operation ended or since the graph's lowering began (`mark()`,
called from a `post_grad_custom_pre_pass`, see stage_hooks.py), which includes precompilation as
the user waits for it; a little lowering work between two tuned operations is counted too.

Each operation becomes one `compilescope_autotune` artifact, logged from inside the compile (so
it carries the compile id): `{"graph": forward|backward|inference, "results": [<AutotuneResult>]}`.
Removing the saver on exit touches only our own entry in the selector cache's list.
"""

from __future__ import annotations

import json
import logging
import math
import re
import time
from types import TracebackType
from typing import Any

from compiler_core.session.model import AutotuneChoice, AutotuneResult
from compiler_core.session.wire import plain

TORCH_VERSIONS = ("2.11", "2.15")  # oldest, newest served (see the package docstring)

ARTIFACT = "compilescope_autotune"
_LOGGER = "torch._inductor.select_algorithm"
_KV = re.compile(r"(\w+)=([^,\s]+)")


class _ErrorLog(logging.Handler):
    """Keeps warnings and errors Inductor logs while benchmarking (failed candidates' reasons)."""

    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
        except Exception:  # a bad format string must never break the compile
            text = str(record.msg)
        self.messages.append(text.strip())

    def take(self) -> list[str]:
        out, self.messages = self.messages, []
        return out


class AutotuneRecorder:
    """Context manager: while open, each autotuned operation is logged to the structured trace."""

    def __init__(self) -> None:
        self.results: list[AutotuneResult] = []
        self._errors = _ErrorLog()
        self._last = time.perf_counter()

    def __enter__(self) -> AutotuneRecorder:
        from torch._inductor import select_algorithm

        select_algorithm.add_feedback_saver(self)
        logging.getLogger(_LOGGER).addHandler(self._errors)
        self._last = time.perf_counter()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        from torch._inductor import select_algorithm

        logging.getLogger(_LOGGER).removeHandler(self._errors)
        # No remove_feedback_saver exists (only clear_feedback_savers, which would drop others'
        # savers too): take ours out of the cache's list. The accessor where torch has one.
        accessor = getattr(select_algorithm, "get_algorithm_selector_cache", None)
        cache = accessor() if accessor is not None else getattr(
            select_algorithm, "_ALGORITHM_SELECTOR_CACHE", None)
        savers = getattr(cache, "feedback_saver_fns", None)
        if isinstance(savers, list) and self in savers:
            savers.remove(self)

    def mark(self) -> None:
        """A graph's lowering is about to start: tuning time of its first operation counts from here."""
        self._last = time.perf_counter()

    def __call__(self, timings: dict[Any, float], name: str, input_nodes: list[Any],
                 choices: list[Any], *rest: Any) -> None:
        now = time.perf_counter()
        try:
            result = tuned_result(timings, name, input_nodes, self._errors.take(), now - self._last)
        finally:
            self._last = now
        self.results.append(result)
        emit_result(result, current_partition())


def emit_result(result: AutotuneResult, graph: str) -> None:
    from torch._logging import trace_structured

    trace_structured(
        "artifact",
        metadata_fn=lambda: {"name": ARTIFACT, "encoding": "json"},
        payload_fn=lambda: json.dumps({"graph": graph, "results": [plain(result)]}),
    )


def current_partition() -> str:
    """forward / backward / inference of the graph Inductor is lowering right now ("" if unknown)."""
    try:
        from torch._inductor.virtualized import V

        graph = V.graph
    except Exception:  # outside a lowering (no graph handler installed)
        return ""
    if getattr(graph, "is_backward", False):
        return "backward"
    return "inference" if getattr(graph, "is_inference", False) else "forward"


def tuned_result(timings: dict[Any, float], name: str, input_nodes: list[Any], errors: list[str],
                 elapsed_s: float) -> AutotuneResult:
    """One AutotuneResult from the saver's arguments; choices sorted fastest first, failures last."""
    choices = [choice_record(c, t, errors) for c, t in timings.items()]
    choices.sort(key=lambda c: (c.time_ms is None, c.time_ms or 0.0, c.name))
    winner = choices[0].name if choices and choices[0].time_ms is not None else ""
    return AutotuneResult(op=name, shape=shape_text(input_nodes), choices=tuple(choices), winner=winner,
                          tuning_s=round(elapsed_s, 6))


def choice_record(choice: Any, ms: float, errors: list[str]) -> AutotuneChoice:
    name = str(getattr(choice, "name", type(choice).__name__))
    info = _info(choice)
    config = {k: str(v) for k, v in info.items() if k not in ("backend", "kernel_call_name")}
    description = str(getattr(choice, "description", "") or "")
    for key, value in _KV.findall(description):
        config.setdefault(key, value)
    kind = str(info.get("backend") or _kind_from_class(choice)).lower()
    if math.isfinite(ms):
        return AutotuneChoice(name=name, time_ms=float(ms), kind=kind, config=config)
    error = failure_reason(name, errors)
    return AutotuneChoice(name=name, time_ms=None, kind=kind, config=config, error=error)


def failure_reason(name: str, errors: list[str]) -> str:
    """The logged error that names this candidate, else the last one logged for the operation."""
    for text in reversed(errors):
        if name and name in text:
            return _one_line(text)
    return _one_line(errors[-1]) if errors else "benchmark failed (timing = inf)"


def _one_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    keep = [ln for ln in lines if "out of resource" in ln.lower() or "error" in ln.lower()]
    return (keep or lines or [""])[0][:300]


def _info(choice: Any) -> dict[str, Any]:
    try:
        info = choice.info_dict()
    except Exception:  # some wrappers have no info_dict or raise in it
        return {}
    return dict(info) if isinstance(info, dict) else {}


def _kind_from_class(choice: Any) -> str:
    cls = type(choice).__name__.lower()
    for kind in ("extern", "triton", "cpp", "cutlass", "cute", "rocm"):
        if kind in cls or kind in str(getattr(choice, "name", "")).lower():
            return kind
    return cls


def shape_text(input_nodes: list[Any]) -> str:
    """`32x64 f32, 64x64 f32`: each input's size hint and dtype, as the AUTOTUNE log prints them."""
    parts = []
    for node in input_nodes:
        try:
            size = "x".join(str(s) for s in node.get_size())
            dtype = str(node.get_dtype()).removeprefix("torch.")
        except Exception:
            continue
        parts.append(f"{size} {dtype}")
    return ", ".join(parts)
