"""Exports of a timeline: CSV for spreadsheets, Chrome trace JSON for Perfetto / chrome://tracing.

In the trace every mode is a thread (`tid`) of one process and every step a complete event
(`ph: "X"`) at its real start (`StepSample.start_ms`: all modes and their paired eager steps on
one clock, so the gaps between blocks, where probes and compiles of the next mode ran, show);
a session recorded without start times gets its steps laid end to end from 0 instead
(`otherData.steps` says which). Eager steps paired with a compiled mode's (the speedup's
baseline) get a thread of their own. Compiles and recompiles, whose duration is measured, are
complete events on their mode's thread inside the step they happened in, so a recompile spike
sits right over the compile that explains it; the format wants one thread's complete events to
nest or not overlap, which holds because each is cut at its step's end. Markers without a
duration (shape changes, errors, CUDA-graph records: the compile watch counts recording as
running the step and times none) are instants (`ph: "i"`).

Given the modes' figures, each mode with a runtime profile gets one more thread: its kernels
laid end to end, each as long as its mean µs per step over the few profiled steps. Those are
not times on the run's clock (the profile ran after all timing), and the thread's name says so.

Times are computed in integer nanoseconds and written as microseconds, as the format requires.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from compiler_core.safe_paths import atomic_write_text
from compiler_core.session.model import ModeStats, RuntimeProfile, StepSample, TimelineEvent

CSV_COLUMNS = ("mode", "step", "ms", "warmup", "peak_mem_bytes", "baseline_for", "events")
TRACE_PID = 1


def samples_csv(samples: Sequence[StepSample], events: Sequence[TimelineEvent] = ()) -> str:
    """All samples as CSV, one row per step; `events` names what happened during that step."""
    marks: dict[tuple[str, int], list[str]] = {}
    for e in events:
        marks.setdefault((e.mode, e.step), []).append(f"{e.kind}: {e.reason}" if e.reason else e.kind)
    lines = [_row(CSV_COLUMNS)]
    for s in samples:
        peak = "" if s.peak_mem_bytes is None else s.peak_mem_bytes
        note = "" if s.baseline_for else " | ".join(marks.get((s.mode, s.step), []))
        mode, paired = _cell(s.mode), _cell(s.baseline_for)
        lines.append(_row([mode, s.step, repr(s.ms), int(s.warmup), peak, paired, _cell(note)]))
    return "".join(lines)


# A cell a spreadsheet runs as a formula starts with one of these (OWASP's list for CSV exports).
# It may start after any separator a spreadsheet may split on: the comma we write, or what a
# locale or an import dialog picks instead (`;`, tab, `|`): `x;=cmd|' /C calc'!A0` is one cell
# here and a formula cell in a `;` locale. Quoting protects only from the comma reader.
_FORMULA_START = re.compile(r"(?:^|(?<=[,;\t|\r\n]))( *)(?=[=+\-@])|^(?=[\t\r])")
_QUOTED = re.compile(r"[,;\t|\r\n\"]")


def _cell(text: str) -> str:
    """A text cell from session data that a spreadsheet will not run as a formula (`=HYPERLINK(…)`,
    `+cmd|…`) whatever separator it reads with: the cell, and each part of it after a separator,
    that starts one gets a leading apostrophe; `_row` quotes a cell holding a separator."""
    return _FORMULA_START.sub(lambda m: (m.group(1) or "") + "'", text)


def _row(cells: Sequence[object]) -> str:
    """One CSV line as `csv.writer` writes it, but a cell with any separator a spreadsheet may
    use (not only the comma) is quoted."""
    out = []
    for cell in cells:
        text = str(cell)
        out.append('"' + text.replace('"', '""') + '"' if _QUOTED.search(text) else text)
    return ",".join(out) + "\n"


def chrome_trace(samples: Sequence[StepSample], events: Sequence[TimelineEvent] = (),
                 stats: Sequence[ModeStats] = ()) -> dict[str, Any]:
    """A Chrome trace: one thread per mode (and per paired eager run), one complete event per
    step, complete events for compiles inside their step, instants for the other markers, and
    one thread of profiled kernel times per mode in `stats` that has a runtime profile."""
    tracks = list(dict.fromkeys([_track(s) for s in samples] + [e.mode for e in events]))
    profiled = [(st.mode, st.runtime) for st in stats if st.runtime is not None and st.runtime.kernels]
    tids = {m: i + 1 for i, m in enumerate(tracks)}
    trace: list[dict[str, Any]] = [_meta("process_name", 0, "CompileScope step times")]
    for m in tracks:
        trace += _thread(tids[m], m)
    real = bool(samples) and all(s.start_ms is not None for s in samples)
    timed: dict[tuple[str, int], list[tuple[TimelineEvent, int]]] = {}
    for e in events:
        if e.duration_s is not None:
            timed.setdefault((e.mode, e.step), []).append((e, max(0, _ns(e.duration_s * 1000.0))))
    starts: dict[tuple[str, int], int] = {}
    ends: dict[str, int] = dict.fromkeys(tracks, 0)  # ns: integers keep nesting exact
    for s in samples:
        track = _track(s)
        # never before the previous step's end: rounding must not make two steps overlap
        start = max(_ns(s.start_ms), ends[track]) if real and s.start_ms is not None else ends[track]
        dur = _ns(s.ms)
        args: dict[str, Any] = {"step": s.step, "ms": s.ms, "warmup": s.warmup}
        if s.peak_mem_bytes is not None:
            args["peak_mem_bytes"] = s.peak_mem_bytes
        name = f"step {s.step}" + (" (warm-up)" if s.warmup else "")
        trace.append(_complete(name, "warmup" if s.warmup else "step", start, dur, tids[track], args))
        starts[(track, s.step)] = start
        ends[track] = start + dur
        if not s.baseline_for:
            trace += _compiles(timed.pop((s.mode, s.step), []), start, start + dur, tids[track])
    for (mode, _step), left in timed.items():  # their step has no sample (it failed): after the last
        trace += _compiles(left, ends[mode], None, tids[mode])
        ends[mode] += sum(dur for _, dur in left)
    for e in events:
        if e.duration_s is None:
            ts = _us(starts.get((e.mode, e.step), ends[e.mode]))
            trace.append({"name": e.kind, "ph": "i", "s": "t", "ts": ts, "pid": TRACE_PID,
                          "tid": tids[e.mode], "cat": e.kind, "args": {"step": e.step, "reason": e.reason}})
    for n, (mode, runtime) in enumerate(profiled):
        trace += _kernels(mode, runtime, len(tracks) + 1 + n)
    layout = "real start times" if real else "laid end to end from 0 (no start times recorded)"
    return {"traceEvents": trace, "displayTimeUnit": "ms", "otherData": {"steps": layout}}


def _compiles(timed: Sequence[tuple[TimelineEvent, int]], start: int, end: int | None,
              tid: int) -> list[dict[str, Any]]:
    """A step's compiles (with their durations in ns) as complete events, one after another from
    the step's start in the order they ended (the compile callbacks give durations, not start
    times). Each is cut at the step's `end` so it nests inside the step's event, as the format
    requires of one thread's complete events; `duration_s` in its args stays the measured one."""
    out = []
    at = start
    for e, dur in timed:
        if end is not None:
            dur = max(0, min(dur, end - at))
        out.append(_complete(e.kind, e.kind, at, dur, tid,
                             {"step": e.step, "reason": e.reason, "duration_s": e.duration_s}))
        at += dur
    return out


def _kernels(mode: str, runtime: RuntimeProfile, tid: int) -> list[dict[str, Any]]:
    """A mode's profiled kernels end to end from 0, largest first: a profile sums each kernel
    over its steps and keeps no launch order. Means per step of a few profiled steps, not times
    on the run's clock, which the thread's name says."""
    name = (f"{mode}: kernels (µs per step, profiled: means of {runtime.steps} steps, "
            "not on the run's clock)")
    out = _thread(tid, name)
    at = 0
    for k in sorted(runtime.kernels, key=lambda k: -k.us_per_step):
        dur = max(0, round(k.us_per_step * 1000.0))
        args = {"kind": k.kind, "count_per_step": k.calls_per_step, "us_per_step": k.us_per_step}
        if k.call >= 0:
            args["graph_call"] = k.call
        if k.in_cudagraph:
            args["in_cudagraph"] = True
        label = f"{k.name}:{k.occurrence}" if k.kind == "extern" else k.name
        out.append(_complete(label, k.kind, at, dur, tid, args))
        at += dur
    return out


def _ns(ms: float | None) -> int:
    return 0 if ms is None else round(ms * 1_000_000.0)


def _us(ns: int) -> float:
    """The format's microseconds from integer ns: a reader that rounds `ts * 1000` back (Perfetto)
    gets the same integers, so events that nest here nest there."""
    return ns / 1000.0


def _complete(name: str, cat: str, start: int, dur: int, tid: int, args: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "ph": "X", "ts": _us(start), "dur": _us(dur), "pid": TRACE_PID, "tid": tid,
            "cat": cat, "args": args}


def _track(s: StepSample) -> str:
    return f"eager (paired with {s.baseline_for})" if s.baseline_for else s.mode


def _thread(tid: int, name: str) -> list[dict[str, Any]]:
    """A thread's name, and its place in the order threads are drawn (the order they were made)."""
    order = {"name": "thread_sort_index", "ph": "M", "pid": TRACE_PID, "tid": tid,
             "args": {"sort_index": tid}}
    return [_meta("thread_name", tid, name), order]


def _meta(name: str, tid: int, value: str) -> dict[str, Any]:
    return {"name": name, "ph": "M", "pid": TRACE_PID, "tid": tid, "args": {"name": value}}


def write_csv(path: str | Path, samples: Sequence[StepSample], events: Sequence[TimelineEvent] = ()) -> None:
    atomic_write_text(Path(path), samples_csv(samples, events))


def write_chrome_trace(
    path: str | Path, samples: Sequence[StepSample], events: Sequence[TimelineEvent] = (),
    stats: Sequence[ModeStats] = (),
) -> None:
    atomic_write_text(Path(path), json.dumps(chrome_trace(samples, events, stats)))
