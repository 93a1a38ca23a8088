"""CSV and Chrome-trace exports hold every sample and marker, in formats their readers accept."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from compiler_core.session.model import StepSample, TimelineEvent
from compiler_core.timeline.exporters import chrome_trace, samples_csv, write_chrome_trace, write_csv
from compiler_core.timeline.records import event_from_record, sample_from_record, to_record

SAMPLES = [
    StepSample("eager", 0, 2.5), StepSample("eager", 1, 2.0, peak_mem_bytes=1 << 20),
    StepSample("default", 0, 1500.0, warmup=True), StepSample("default", 1, 1.25),
]
EVENTS = [TimelineEvent("default", 0, "compile", "compile 0/0", 1.49),
          TimelineEvent("default", 1, "recompile", "0/0: size mismatch, at index 0", 0.2)]


def test_csv_round_trips_every_sample() -> None:
    rows = list(csv.DictReader(io.StringIO(samples_csv(SAMPLES, EVENTS))))
    assert len(rows) == len(SAMPLES)
    assert [float(r["ms"]) for r in rows] == [s.ms for s in SAMPLES]
    assert rows[2]["warmup"] == "1" and rows[2]["events"] == "compile: compile 0/0"
    assert rows[3]["events"].startswith("recompile: 0/0: size mismatch, at index 0")
    assert rows[1]["peak_mem_bytes"] == str(1 << 20) and rows[0]["peak_mem_bytes"] == ""


def test_chrome_trace_has_one_thread_per_mode_and_contiguous_steps(tmp_path: Path) -> None:
    path = tmp_path / "trace.json"
    write_chrome_trace(path, SAMPLES, EVENTS)
    trace = json.loads(path.read_text())["traceEvents"]
    steps = [e for e in trace if e["ph"] == "X"]
    assert len(steps) == 4
    for e in steps:
        assert {"name", "ph", "ts", "dur", "pid", "tid", "args"} <= e.keys()
    default = [e for e in steps if e["tid"] == 2]
    assert default[1]["ts"] == default[0]["ts"] + default[0]["dur"] == 1_500_000.0
    names = {e["args"]["name"] for e in trace if e["ph"] == "M" and e["name"] == "thread_name"}
    assert names == {"eager", "default"}
    marks = [e for e in trace if e["ph"] == "i"]
    assert [m["name"] for m in marks] == ["compile", "recompile"]
    assert marks[1]["ts"] == default[1]["ts"] and marks[1]["tid"] == 2


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
