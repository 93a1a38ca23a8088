"""Exports of a timeline: CSV for spreadsheets, Chrome trace JSON for Perfetto / chrome://tracing.

In the trace every mode is a thread (`tid`) of one process, steps are laid end to end as
complete events (`ph: "X"`) in the order they ran, and compiles, recompiles and shape changes
are instant events (`ph: "i"`) on the same thread, so a recompile spike sits right under the
marker that explains it. Eager steps paired with a compiled mode's (the speedup's baseline) get
a thread of their own. Times are microseconds, as the format requires.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from compiler_core.safe_paths import atomic_write_text
from compiler_core.session.model import StepSample, TimelineEvent

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


def chrome_trace(samples: Sequence[StepSample], events: Sequence[TimelineEvent] = ()) -> dict[str, Any]:
    """A Chrome trace: one thread per mode, one complete event per step, instants for markers."""
    modes = list(dict.fromkeys([_track(s) for s in samples] + [e.mode for e in events]))
    tids = {m: i + 1 for i, m in enumerate(modes)}
    trace: list[dict[str, Any]] = [_meta("process_name", 0, "CompileScope step times")]
    trace += [_meta("thread_name", tids[m], m) for m in modes]
    starts: dict[tuple[str, int], float] = {}
    clock: dict[str, float] = dict.fromkeys(modes, 0.0)
    for s in samples:
        track = _track(s)
        ts = clock[track]
        starts[(track, s.step)] = ts
        dur = s.ms * 1000.0
        args: dict[str, Any] = {"step": s.step, "ms": s.ms, "warmup": s.warmup}
        if s.peak_mem_bytes is not None:
            args["peak_mem_bytes"] = s.peak_mem_bytes
        name = f"step {s.step}" + (" (warm-up)" if s.warmup else "")
        trace.append({"name": name, "ph": "X", "ts": ts, "dur": dur, "pid": TRACE_PID,
                      "tid": tids[track], "cat": "warmup" if s.warmup else "step", "args": args})
        clock[track] = ts + dur
    for e in events:
        ts = starts.get((e.mode, e.step), clock[e.mode])
        args = {"step": e.step, "reason": e.reason}
        if e.duration_s is not None:
            args["duration_s"] = e.duration_s
        trace.append({"name": e.kind, "ph": "i", "s": "t", "ts": ts, "pid": TRACE_PID,
                      "tid": tids[e.mode], "cat": e.kind, "args": args})
    return {"traceEvents": trace, "displayTimeUnit": "ms"}


def _track(s: StepSample) -> str:
    return f"eager (paired with {s.baseline_for})" if s.baseline_for else s.mode


def _meta(name: str, tid: int, value: str) -> dict[str, Any]:
    return {"name": name, "ph": "M", "pid": TRACE_PID, "tid": tid, "args": {"name": value}}


def write_csv(path: str | Path, samples: Sequence[StepSample], events: Sequence[TimelineEvent] = ()) -> None:
    atomic_write_text(Path(path), samples_csv(samples, events))


def write_chrome_trace(
    path: str | Path, samples: Sequence[StepSample], events: Sequence[TimelineEvent] = ()
) -> None:
    atomic_write_text(Path(path), json.dumps(chrome_trace(samples, events)))
