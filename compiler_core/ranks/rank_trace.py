"""One Chrome/Perfetto trace for every rank of a job: each rank its own process, on one clock.

Each rank's steps go through `timeline.exporters.chrome_trace`, the one-rank writer, unchanged:
its events are taken as they are and moved to the rank's own process (pid `rank + 1`; some
viewers treat pid 0 as idle), its threads named for the callable without the `rN:` prefix. A
script run records every step's host start on the wall clock (run/step_timer.py: ms since
midnight UTC of the run's day), the clock torch's own `chromium_event` records use (µs since
the Unix epoch, read here as ms since the same midnight), so given the rank logs each rank gets
a `compile` thread with the compile phases torch logged (`entire_frame_compile`,
`backend_compile`, `inductor_compile`...) as the begin/end pairs it wrote, and Perfetto shows
a rank still compiling while the others wait beside it.

Every time is moved by one origin (the earliest time of any rank, kept in `otherData`) before
the one-rank writer sees it, so its integer-ns arithmetic works on small numbers and nesting
stays exact. Steps of a session without start times are laid end to end from 0 per rank, as
the one-rank writer does, and `otherData.steps` says they are not aligned.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from compiler_core.export.timeline_files import TRACE_PID, chrome_trace
from compiler_core.ranks.stragglers import RANK_MODE
from compiler_core.safe_paths import atomic_write_text
from compiler_core.session.model import Session, StepSample, TimelineEvent
from compiler_core.trace.records import RecordReader
from compiler_core.trace.trace_folders import trace_files

COMPILE_TID = 100000  # past any callable's thread: the compile phases of one rank
PHASES = frozenset({"B", "E", "X", "i"})
DAY_MS = 86_400_000.0  # a script run's step starts count within the day (run/step_timer.py)


@dataclasses.dataclass(frozen=True)
class ChromiumEvent:
    """One phase event torch logged (`chromium_event` record), its time in µs since the Unix
    epoch as torch writes it."""

    name: str
    ph: str
    ts_us: float
    compile_id: str = ""
    dur_us: float | None = None


def rank_pid(rank: int) -> int:
    return rank + 1


def compile_phases(logs: str | Path) -> dict[int, list[ChromiumEvent]]:
    """rank -> the phase events its log holds, in log order (a folder of rank logs, as
    `TORCH_TRACE` or `run --nproc` writes them). A log without a rank is left out."""
    out: dict[int, list[ChromiumEvent]] = {}
    for path, rank in trace_files(logs):
        if rank is None:
            continue
        events = out.setdefault(rank, [])
        for rec in RecordReader(path, frozenset({"chromium_event"})):
            if rec.kind != "chromium_event":
                continue
            try:
                ev = rec.payload_json()
            except ValueError:
                continue
            if isinstance(ev, dict) and ev.get("ph") in PHASES and isinstance(ev.get("ts"), int | float):
                args = ev.get("args") if isinstance(ev.get("args"), dict) else {}
                cid = str(args.get("compile_id", "")) if args else ""
                dur = ev.get("dur") if isinstance(ev.get("dur"), int | float) else None
                events.append(ChromiumEvent(str(ev.get("name", "")), ev["ph"], float(ev["ts"]),
                                            "" if cid == "None" else cid, dur))  # fmt: skip
    return out


def multi_rank_trace(session: Session,
                     phases: dict[int, list[ChromiumEvent]] | None = None) -> dict[str, Any]:
    """The Chrome trace of every rank: its steps and compile markers (from the session's
    timeline) and, given `phases` (`compile_phases(logs)`), the compile phases torch logged."""
    phases = phases or {}
    samples: dict[int, list[StepSample]] = {}
    events: dict[int, list[TimelineEvent]] = {}
    for s in session.timeline:
        m = RANK_MODE.match(s.mode)
        if m is not None:
            samples.setdefault(int(m.group(1)), []).append(s)
    for e in session.timeline_events:
        m = RANK_MODE.match(e.mode)
        if m is not None:
            events.setdefault(int(m.group(1)), []).append(e)
    ranks = sorted(set(samples) | set(events) | set(phases) | {c.rank for c in session.compiles
                                                                if c.rank is not None})  # fmt: skip
    real = bool(samples) and all(s.start_ms is not None for ss in samples.values() for s in ss)
    phase_ms = {r: _since_midnight(es) for r, es in phases.items()}
    origin_ms = _origin_ms(samples.values() if real else [], phase_ms.values())
    trace: list[dict[str, Any]] = []
    for rank in ranks:
        shifted = [dataclasses.replace(s, start_ms=s.start_ms - origin_ms) if real and s.start_ms is not None
                   else dataclasses.replace(s, start_ms=None) for s in samples.get(rank, [])]  # fmt: skip
        trace += _rank_events(rank, shifted, events.get(rank, []))
        trace += _phase_events(rank, phase_ms.get(rank, []), origin_ms)
    layout = ("real start times, every rank on one clock" if real else
              "laid end to end from 0 per rank (no start times recorded): ranks are not aligned")
    return {"traceEvents": trace, "displayTimeUnit": "ms",
            "otherData": {"steps": layout, "ranks": len(ranks), "origin_ms": origin_ms}}  # fmt: skip


def logs_for(session: Session, session_path: str | Path | None = None) -> Path | None:
    """Where the rank logs of `session` are, for their compile phases: the folder a trace
    import read, or the `.trace` folder a `run --nproc` writes beside its session file (the
    session does not name it); None when neither is there."""
    read = session.meta.origin_path
    if session.meta.origin == "trace" and read and Path(read).is_dir():
        return Path(read)
    if session_path is not None:
        beside = Path(session_path).with_suffix(".trace")
        if beside.is_dir():
            return beside
    return None


def write_multi_rank_trace(path: str | Path, session: Session, logs: str | Path | None = None) -> None:
    phases = compile_phases(logs) if logs is not None else None
    atomic_write_text(Path(path), json.dumps(multi_rank_trace(session, phases)))


def _since_midnight(events: list[ChromiumEvent]) -> list[tuple[ChromiumEvent, float]]:
    """Each event with its time in ms since midnight UTC of the day of the rank's first event:
    the clock a script run's steps are on (a rank whose first compile came within ms after a
    midnight its step timer started before would be off by a day; not handled)."""
    if not events:
        return []
    day0 = min(e.ts_us for e in events) / 1000.0 // DAY_MS * DAY_MS
    return [(e, e.ts_us / 1000.0 - day0) for e in events]


def _origin_ms(samples: Iterable[Sequence[StepSample]],
               phases: Iterable[Sequence[tuple[ChromiumEvent, float]]]) -> float:  # fmt: skip
    times = [s.start_ms for ss in samples for s in ss if s.start_ms is not None]
    times += [ms for es in phases for _, ms in es]
    return min(times) if times else 0.0


def _rank_events(rank: int, samples: list[StepSample], events: list[TimelineEvent]) -> list[dict[str, Any]]:
    """The one-rank writer's events for this rank, moved into the rank's own process."""
    if not samples and not events:
        return [_process_name(rank)]
    out = [_process_name(rank)]
    for ev in chrome_trace(samples, events)["traceEvents"]:
        if ev.get("ph") == "M" and ev.get("name") == "process_name":
            continue
        ev = {**ev, "pid": rank_pid(rank)} if ev.get("pid") == TRACE_PID else ev
        if ev.get("ph") == "M" and ev.get("name") == "thread_name":
            label = str(ev["args"]["name"])
            m = RANK_MODE.match(label)
            ev = {**ev, "args": {"name": m.group(2) if m else label}}
        out.append(ev)
    return out


def _phase_events(rank: int, phases: list[tuple[ChromiumEvent, float]],
                  origin_ms: float) -> list[dict[str, Any]]:  # fmt: skip
    """The rank's phase events on its `compile` thread, each at its ms (since midnight) less
    the trace's origin."""
    if not phases:
        return []
    pid = rank_pid(rank)
    out: list[dict[str, Any]] = [
        {"name": "thread_name", "ph": "M", "pid": pid, "tid": COMPILE_TID,
         "args": {"name": "compile (phases torch logged)"}},
        {"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": COMPILE_TID, "args": {"sort_index": 0}},
    ]  # fmt: skip
    for e, ms in _balanced(phases):
        ts = round((ms - origin_ms) * 1000.0, 3)
        ev: dict[str, Any] = {"name": e.name, "ph": e.ph, "ts": ts, "pid": pid, "tid": COMPILE_TID,
                              "cat": "compile", "args": {"compile_id": e.compile_id}}
        if e.ph == "X" and e.dur_us is not None:
            ev["dur"] = e.dur_us
        if e.ph == "i":
            ev["s"] = "t"
        out.append(ev)
    return out


def _balanced(phases: list[tuple[ChromiumEvent, float]]) -> list[tuple[ChromiumEvent, float]]:
    """The events without an end that has no begin before it (a log opened mid-span, such as
    a cache lookup started before the trace sink was installed): a viewer would close the
    wrong span with it."""
    open_: dict[str, int] = {}
    out = []
    for e, ms in phases:
        if e.ph == "B":
            open_[e.name] = open_.get(e.name, 0) + 1
        elif e.ph == "E":
            if not open_.get(e.name):
                continue
            open_[e.name] -= 1
        out.append((e, ms))
    return out


def _process_name(rank: int) -> dict[str, Any]:
    return {"name": "process_name", "ph": "M", "pid": rank_pid(rank), "tid": 0,
            "args": {"name": f"rank {rank}"}}
