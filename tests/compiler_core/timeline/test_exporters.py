"""CSV and Chrome-trace exports hold every sample and marker, in formats their readers accept.

The trace tests check a real CPU run (run_phase on a tiny training model, compiled for real) and
a session recorded before steps had start times, against the trace-event format's rules: every
event named and placed, complete events of one thread nested or apart (Perfetto drops those that
are not), steps at their real start times where the run recorded them.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import itertools
import json
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from compiler_core.export.timeline_files import chrome_trace, samples_csv, write_chrome_trace, write_csv
from compiler_core.modelfile import load_model_file
from compiler_core.session.codec import dumps, load, loads
from compiler_core.session.model import ModeStats, Session, StepSample, TimelineEvent
from compiler_core.timeline import run_phase
from compiler_core.timeline.records import event_from_record, sample_from_record, to_record, with_timeline
from compiler_core.timeline.run_phase import PAIR_BLOCK
from tests.compiler_core.timeline.test_run_phase import TINY_TRAIN
from tests.conftest import ROOT

SAMPLES = [
    StepSample("eager", 0, 2.5), StepSample("eager", 1, 2.0, peak_mem_bytes=1 << 20),
    StepSample("default", 0, 1500.0, warmup=True), StepSample("default", 1, 1.25),
]
EVENTS = [TimelineEvent("default", 0, "compile", "compile 0/0", 1.49),
          TimelineEvent("default", 1, "recompile", "0/0: size mismatch, at index 0", 0.2),
          TimelineEvent("default", 1, "shape_change", "(4, 8) → (5, 8)")]
OLD_SESSION = ROOT / "resources" / "sessions" / "transformer_block.json"  # saved without start times
STEPS = 20
SHAPE_STEP = 12
Run = tuple[list[StepSample], list[TimelineEvent], list[ModeStats]]


def test_csv_round_trips_every_sample() -> None:
    rows = list(csv.DictReader(io.StringIO(samples_csv(SAMPLES, EVENTS))))
    assert len(rows) == len(SAMPLES)
    assert [float(r["ms"]) for r in rows] == [s.ms for s in SAMPLES]
    assert rows[2]["warmup"] == "1" and rows[2]["events"] == "compile: compile 0/0"
    assert rows[3]["events"].startswith("recompile: 0/0: size mismatch, at index 0")
    assert rows[1]["peak_mem_bytes"] == str(1 << 20) and rows[0]["peak_mem_bytes"] == ""


def test_chrome_trace_without_start_times_lays_steps_end_to_end(tmp_path: Path) -> None:
    path = tmp_path / "trace.json"
    write_chrome_trace(path, SAMPLES, EVENTS)
    data = json.loads(path.read_text())
    trace = data["traceEvents"]
    check_trace_format(trace)
    steps = [e for e in trace if e["ph"] == "X" and e["cat"] in ("step", "warmup")]
    assert len(steps) == 4
    default = [e for e in steps if e["tid"] == 2]
    assert default[1]["ts"] == default[0]["ts"] + default[0]["dur"] == 1_500_000.0
    assert data["otherData"]["steps"].startswith("laid end to end")
    assert thread_names(trace) == {1: "eager", 2: "default"}
    compile_, recompile = (e for e in trace if e["ph"] == "X" and e["cat"] in ("compile", "recompile"))
    assert (compile_["ts"], compile_["dur"], compile_["tid"]) == (0.0, 1_490_000.0, 2)
    # 0.2 s measured in a 1.25 ms step (made-up figures): cut at the step's end, so it still
    # nests; the measured duration stays in its args
    assert (recompile["ts"], recompile["dur"]) == (default[1]["ts"], default[1]["dur"])
    assert recompile["args"]["duration_s"] == 0.2
    marks = [e for e in trace if e["ph"] == "i"]
    assert [(m["name"], m["ts"], m["tid"]) for m in marks] == [("shape_change", default[1]["ts"], 2)]


def test_steps_are_laid_end_to_end_unless_every_sample_has_a_start_time() -> None:
    starts = (0.0, 3.0, 10.0, 1600.0)
    placed = [dataclasses.replace(s, start_ms=at) for s, at in zip(SAMPLES, starts, strict=True)]
    real = chrome_trace(placed)
    assert [e["ts"] for e in real["traceEvents"] if e["ph"] == "X"] == [0.0, 3_000.0, 10_000.0, 1_600_000.0]
    assert real["otherData"]["steps"] == "real start times"
    mixed = chrome_trace([*placed[:2], *SAMPLES[2:]])
    assert [e["ts"] for e in mixed["traceEvents"] if e["ph"] == "X"] == [0.0, 2_500.0, 0.0, 1_500_000.0]


def test_write_csv_and_trace_accept_empty_runs(tmp_path: Path) -> None:
    write_csv(tmp_path / "a.csv", [])
    assert (tmp_path / "a.csv").read_text().startswith("mode,step,ms")
    assert [e["ph"] for e in chrome_trace([])["traceEvents"]] == ["M"]


def test_records_round_trip_and_ignore_unknown_keys() -> None:
    for s in SAMPLES:
        rec = to_record(s)
        assert rec["event"] == "sample"
        assert sample_from_record({**rec, "future_field": 1}) == s
    assert event_from_record(to_record(EVENTS[1])) == EVENTS[1]
    assert to_record(EVENTS[0])["event"] == "timeline_event"


# ---------------------------------------------------------------- a real run, exported


@pytest.fixture(scope="module")
def cpu_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    path = tmp_path_factory.mktemp("model") / "tiny_train.py"
    path.write_text(TINY_TRAIN)
    return run_phase(load_model_file(path), ["default"], STEPS, "cpu", shape_change_step=SHAPE_STEP)


@pytest.mark.slow
def test_a_run_places_every_step_on_one_clock_without_overlap(cpu_run: Run) -> None:
    samples, _, _ = cpu_run
    assert all(s.start_ms is not None and s.start_ms >= 0 for s in samples)
    # in run order: eager's own steps, then blocks of default's, each followed by its paired eager
    # block; each step starts no earlier than the one before it ended (float rounding aside)
    for before, after in itertools.pairwise(samples):
        assert after.start_ms > before.start_ms  # type: ignore[operator]
        assert after.start_ms >= before.start_ms + before.ms - 1e-6  # type: ignore[operator]
    default = [s for s in samples if s.mode == "default"]
    paired = [s for s in samples if s.baseline_for == "default"]
    for first in range(0, STEPS, PAIR_BLOCK):
        block = default[first:first + PAIR_BLOCK]
        pair = paired[first:first + PAIR_BLOCK]
        assert [s.step for s in pair] == [s.step for s in block]
        assert pair[0].start_ms >= block[-1].start_ms + block[-1].ms - 1e-6  # type: ignore[operator]
        # the gap between blocks is real: the next block starts after a synchronisation
        nxt = default[first + PAIR_BLOCK:first + PAIR_BLOCK + 1]
        if nxt:
            assert nxt[0].start_ms >= pair[-1].start_ms + pair[-1].ms - 1e-6  # type: ignore[operator]


@pytest.mark.slow
def test_the_trace_of_a_run_is_valid_and_steps_sit_at_their_start_times(cpu_run: Run) -> None:
    samples, events, stats = cpu_run
    data = chrome_trace(samples, events, stats)
    trace = data["traceEvents"]
    check_trace_format(trace)
    assert data["otherData"]["steps"] == "real start times"
    names = thread_names(trace)
    tid = {name: t for t, name in names.items()}
    steps = [e for e in trace if e["ph"] == "X" and e["cat"] in ("step", "warmup")]
    assert len(steps) == len(samples)
    for s, e in zip(samples, steps, strict=True):
        track = f"eager (paired with {s.baseline_for})" if s.baseline_for else s.mode
        assert e["tid"] == tid[track] and e["args"]["step"] == s.step
        # a start moves later only to clear the previous step's end: both ends round to the ns
        # (0.5 ns each) and a sample may begin 1 ns before the previous one ends: 2 ns, and 3 with float slack
        assert e["ts"] == pytest.approx(s.start_ms * 1000, abs=0.003)  # type: ignore[operator]
        assert e["dur"] == pytest.approx(s.ms * 1000, abs=0.002)


@pytest.mark.slow
def test_compiles_are_complete_events_of_their_measured_duration_inside_their_step(cpu_run: Run) -> None:
    samples, events, stats = cpu_run
    trace = chrome_trace(samples, events, stats)["traceEvents"]
    tid = {name: t for t, name in thread_names(trace).items()}["default"]
    step_events = {e["args"]["step"]: e for e in trace
                   if e["ph"] == "X" and e["tid"] == tid and e["cat"] in ("step", "warmup")}
    timed = [e for e in events if e.duration_s is not None]
    assert {(e.step, e.kind) for e in timed} >= {(0, "compile"), (SHAPE_STEP, "recompile")}
    drawn = [e for e in trace if e["ph"] == "X" and e["cat"] in ("compile", "recompile")]
    assert [(e["args"]["step"], e["name"]) for e in drawn] == [(e.step, e.kind) for e in timed]
    for event, e in zip(timed, drawn, strict=True):
        step = step_events[event.step]
        assert e["tid"] == tid
        assert e["dur"] == pytest.approx(event.duration_s * 1e6, abs=0.002)  # type: ignore[operator]
        assert step["ts"] <= e["ts"] and e["ts"] + e["dur"] <= step["ts"] + step["dur"] + 0.002
    first = [e for e in drawn if e["args"]["step"] == 0]
    assert first[0]["ts"] == step_events[0]["ts"]  # from the step's start, one after another
    for a, b in itertools.pairwise(first):
        assert b["ts"] == pytest.approx(a["ts"] + a["dur"], abs=0.002)
    # shape changes (eager's too) have no duration: instants, at their step's start
    starts = {(e["tid"], e["args"]["step"]): e["ts"] for e in trace
              if e["ph"] == "X" and e["cat"] in ("step", "warmup")}
    shape = [e for e in trace if e["ph"] == "i" and e["name"] == "shape_change"]
    assert len(shape) == 2 and tid in {e["tid"] for e in shape}
    assert all(e["ts"] == starts[(e["tid"], SHAPE_STEP)] for e in shape)


@pytest.mark.slow
def test_kernel_threads_appear_only_for_modes_with_a_runtime_profile(cpu_run: Run) -> None:
    samples, events, stats = cpu_run
    eager, default = stats
    assert default.runtime is not None and default.runtime.kernels
    trace = chrome_trace(samples, events, [dataclasses.replace(eager, runtime=None), default])["traceEvents"]
    check_trace_format(trace)
    kernel_threads = {t: name for t, name in thread_names(trace).items() if "kernels" in name}
    assert list(kernel_threads.values()) == [
        f"default: kernels (µs per step, profiled: means of {default.runtime.steps} steps, "
        "not on the run's clock)"]
    [tid] = kernel_threads
    kernels = [e for e in trace if e["ph"] == "X" and e["tid"] == tid]
    assert len(kernels) == len(default.runtime.kernels)
    assert kernels[0]["ts"] == 0.0
    for a, b in itertools.pairwise(kernels):  # end to end, largest first
        assert b["ts"] == pytest.approx(a["ts"] + a["dur"], abs=0.002) and b["dur"] <= a["dur"]
    by_name = {(k.name if k.kind != "extern" else f"{k.name}:{k.occurrence}"): k
               for k in default.runtime.kernels}
    for e in kernels:
        k = by_name[e["name"]]
        assert e["dur"] == pytest.approx(k.us_per_step, abs=0.001)
        assert e["args"]["kind"] == k.kind and e["args"]["count_per_step"] == k.calls_per_step
    assert any(e["args"]["kind"] == "kernel" for e in kernels)  # Inductor's C++ kernels, by name
    both = chrome_trace(samples, events, stats)["traceEvents"]
    assert sum("kernels" in n for n in thread_names(both).values()) == 2
    without = chrome_trace(samples, events)["traceEvents"]
    assert not any("kernels" in n for n in thread_names(without).values())


@pytest.mark.slow
def test_start_times_survive_saving_and_reopening_the_session(cpu_run: Run) -> None:
    samples, events, stats = cpu_run
    reopened = loads(dumps(with_timeline(Session(), samples, events, stats)))
    assert list(reopened.timeline) == samples
    assert chrome_trace(reopened.timeline, reopened.timeline_events) == chrome_trace(samples, events)


def test_a_session_saved_without_start_times_still_exports_end_to_end() -> None:
    session = load(OLD_SESSION)
    assert session.timeline and all(s.start_ms is None for s in session.timeline)
    data = chrome_trace(session.timeline, session.timeline_events, session.mode_stats)
    trace = data["traceEvents"]
    check_trace_format(trace)
    assert data["otherData"]["steps"].startswith("laid end to end")
    tid = {name: t for t, name in thread_names(trace).items()}
    assert set(tid) == {"eager", "default"}  # no profile stored: no kernel thread
    for mode in ("eager", "default"):
        steps = [e for e in trace
                 if e["ph"] == "X" and e["tid"] == tid[mode] and e["cat"] in ("step", "warmup")]
        own = [s for s in session.timeline if s.mode == mode]
        assert steps[0]["ts"] == 0.0 and len(steps) == len(own)
        for a, b in itertools.pairwise(steps):
            assert b["ts"] == pytest.approx(a["ts"] + a["dur"], abs=0.002)
    compiles = [e for e in trace if e["ph"] == "X" and e["cat"] == "compile"]
    assert [e["args"]["reason"] for e in compiles] == [e.reason for e in session.timeline_events]
    assert compiles[0]["ts"] == 0.0 and compiles[0]["tid"] == tid["default"]


# ------------------------------------------------------------------ the trace-event format


def check_trace_format(trace: list[dict[str, Any]]) -> None:
    """The rules of the trace-event format a reader holds us to: metadata events name a process or
    thread; every other event has a name, a phase, a time, a process and a thread; a complete
    event has a duration >= 0; and one thread's complete events nest or lie apart (Perfetto's
    importer drops an event that overlaps another partly). Times are compared as Perfetto
    reads them: rounded to integer nanoseconds."""
    spans: dict[tuple[int, int], list[tuple[int, int]]] = defaultdict(list)
    for e in trace:
        assert {"name", "ph", "pid", "tid"} <= e.keys(), e
        assert isinstance(e["name"], str) and e["name"]
        if e["ph"] == "M":
            assert isinstance(e["args"]["name" if "name" in e["name"] else "sort_index"], str | int)
            continue
        assert e["ph"] in ("X", "i"), e
        assert isinstance(e["ts"], int | float) and e["ts"] >= 0, e
        if e["ph"] == "X":
            assert isinstance(e["dur"], int | float) and e["dur"] >= 0, e
            start = round(e["ts"] * 1000)
            spans[(e["pid"], e["tid"])].append((start, start + round(e["dur"] * 1000)))
    for thread in spans.values():
        assert_nested(thread)


def assert_nested(spans: Iterable[tuple[int, int]]) -> None:
    open_ends: list[int] = []  # ends of the spans enclosing the current one, innermost last
    for start, end in sorted(spans, key=lambda s: (s[0], -s[1])):
        while open_ends and open_ends[-1] <= start:
            open_ends.pop()
        assert not open_ends or end <= open_ends[-1], f"[{start}, {end}] overlaps one ending {open_ends[-1]}"
        open_ends.append(end)


def thread_names(trace: list[dict[str, Any]]) -> dict[int, str]:
    return {e["tid"]: e["args"]["name"] for e in trace if e["ph"] == "M" and e["name"] == "thread_name"}


def test_the_nesting_check_refuses_partly_overlapping_spans() -> None:
    assert_nested([(0, 10), (0, 4), (4, 10), (10, 12)])
    with pytest.raises(AssertionError):
        assert_nested([(0, 10), (5, 15)])
