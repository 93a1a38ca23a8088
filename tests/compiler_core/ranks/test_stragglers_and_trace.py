"""Who is slow, and one Chrome trace for all ranks, from recorded two-rank runs (rank_data.py):
`slow_rank` sleeps 40 ms per step on rank 1 only, `diverge` compiles more on rank 1."""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections import defaultdict
from typing import Any

import pytest

from compiler_core.analysis import import_trace
from compiler_core.export.timeline_files import chrome_trace
from compiler_core.ranks.rank_trace import (
    COMPILE_TID,
    compile_phases,
    logs_for,
    multi_rank_trace,
    rank_pid,
    write_multi_rank_trace,
)
from compiler_core.ranks.stragglers import DURATION, rank_step_times, straggler_report
from tests.compiler_core.ranks.rank_data import load_run, logs_of
from tests.compiler_core.timeline.test_exporters import assert_nested, check_trace_format

DELAY_MS = 40.0  # slow_rank.py's default


def test_the_rank_that_sleeps_in_every_step_is_the_straggler() -> None:
    report = straggler_report(load_run("slow_rank"))
    assert len(report.stragglers) == 1
    s = report.stragglers[0]
    assert (s.rank, s.label, s.slowest_share) == (1, "step", 1.0)
    assert 0.8 * DELAY_MS <= s.median_lag_ms < 10 * DELAY_MS  # the sleep, give or take the step itself
    (step,) = report.callables
    assert len(step.steps) == 9 and all(x.slowest == 1 for x in step.steps)  # 10 steps, 1 warm-up
    assert step.median_skew_ms is not None and step.median_skew_ms >= 0.8 * DELAY_MS
    lags = {lag.rank: lag for lag in step.lags}
    assert lags[1].slowest_steps == 9 and lags[0].median_lag_ms == pytest.approx(-lags[1].median_lag_ms)
    assert report.compile_skew_s is not None and set(report.compile_s) == {0, 1}
    assert "rank 1 is the straggler on step" in s.text()
    # the ranks start each step together (rank 0 a fraction of a ms late): durations name it
    assert s.signal == DURATION and all(abs(lag.median_arrival_ms or 0.0) < 1.0 for lag in step.lags)


def test_no_straggler_without_enough_steady_steps_and_compile_skew_is_measured() -> None:
    session = load_run("diverge")  # 4 steps, 2 of them compile on rank 1
    report = straggler_report(session)
    assert report.stragglers == ()
    # rank 1's seconds hold the two frames it alone compiled
    alone = sum(c.metrics.total_s or 0.0 for c in session.compiles
                if c.rank == 1 and c.compile_id in ("2/0", "0/1"))  # fmt: skip
    assert alone > 0 and report.compile_s[1] >= alone
    slowest = report.as_dict()["slowest_compile_rank"]
    assert report.compile_s[slowest] == max(report.compile_s.values())
    # per compile id, only ids both ranks compiled (2/0 and 0/1 are rank 1's alone), widest first
    assert {s.compile_id for s in report.compile_skews} == {"0/0", "1/0"}
    skews = [s.skew_s for s in report.compile_skews]
    assert skews == sorted(skews, reverse=True) and all(s >= 0 for s in skews)
    warm = rank_step_times(session, steady=False)["step"]
    assert set(warm) == {0, 1} and len(warm[1]) == 4


def _check_format(trace: list[dict[str, Any]]) -> None:
    """The trace-event rules a reader holds us to, with begin/end pairs: complete events nest
    per thread, every end closes a begin of the same thread, all times >= 0."""
    spans: dict[tuple[int, int], list[tuple[int, int]]] = defaultdict(list)
    depth: dict[tuple[int, int], list[str]] = defaultdict(list)
    for e in trace:
        assert {"name", "ph", "pid", "tid"} <= e.keys(), e
        if e["ph"] == "M":
            continue
        assert e["ph"] in ("X", "i", "B", "E") and e["ts"] >= 0, e
        key = (e["pid"], e["tid"])
        if e["ph"] == "X":
            start = round(e["ts"] * 1000)
            spans[key].append((start, start + round(e["dur"] * 1000)))
        elif e["ph"] == "B":
            depth[key].append(e["name"])
        elif e["ph"] == "E":
            assert depth[key] and depth[key].pop() == e["name"], e
    for thread in spans.values():
        assert_nested(thread)


def test_one_trace_every_rank_its_own_process_on_one_clock() -> None:
    session = load_run("slow_rank")
    data = multi_rank_trace(session, compile_phases(logs_of("slow_rank")))
    trace = data["traceEvents"]
    _check_format(trace)
    assert data["otherData"]["steps"].startswith("real start times")
    names = {e["pid"]: e["args"]["name"] for e in trace if e["name"] == "process_name"}
    assert names == {rank_pid(0): "rank 0", rank_pid(1): "rank 1"}
    steps = {r: [e for e in trace if e["pid"] == rank_pid(r) and e.get("cat") in ("step", "warmup")]
             for r in (0, 1)}  # fmt: skip
    assert len(steps[0]) == len(steps[1]) == 10
    # rank 0 waits for rank 1 at the all_reduce after each step: the next steps start together,
    # though rank 0's step is 40 ms shorter
    for a, b in zip(steps[0][1:], steps[1][1:], strict=True):
        assert abs(a["ts"] - b["ts"]) < DELAY_MS * 1000 / 2
        assert b["dur"] - a["dur"] >= DELAY_MS * 1000 * 0.9
    # each rank's compile phases, as torch logged them, lie inside its warm-up step
    for r in (0, 1):
        frames = [e for e in trace if e["pid"] == rank_pid(r) and e["tid"] == COMPILE_TID
                  and e["name"] == "entire_frame_compile"]  # fmt: skip
        assert [e["ph"] for e in frames] == ["B", "E", "B", "E"]
        warm = steps[r][0]
        assert all(warm["ts"] <= e["ts"] <= warm["ts"] + warm["dur"] for e in frames)


def test_one_rank_is_what_the_one_rank_writer_writes_moved_into_its_process() -> None:
    session = load_run("slow_rank")
    data = multi_rank_trace(session)
    origin = data["otherData"]["origin_ms"]
    mine = [s for s in session.timeline if s.mode.startswith("r1:")]
    alone = chrome_trace([dataclasses.replace(s, start_ms=s.start_ms - origin) for s in mine],  # type: ignore[operator]
                         [e for e in session.timeline_events if e.mode.startswith("r1:")])["traceEvents"]
    ours = [e for e in data["traceEvents"] if e["pid"] == rank_pid(1) and e["name"] not in ("process_name",
                                                                                            "thread_name")]
    theirs = [{**e, "pid": rank_pid(1)} for e in alone if e["name"] not in ("process_name", "thread_name")]
    assert ours == theirs and len(ours) > 10


def test_without_start_times_each_rank_is_laid_from_zero_and_says_so() -> None:
    session = load_run("diverge")
    bare = dataclasses.replace(session, timeline=tuple(dataclasses.replace(s, start_ms=None)
                                                       for s in session.timeline))  # fmt: skip
    data = multi_rank_trace(bare)
    _check_format(data["traceEvents"])
    assert "not aligned" in data["otherData"]["steps"]
    for r in (0, 1):
        steps = [e for e in data["traceEvents"]
                 if e["pid"] == rank_pid(r) and e.get("cat") in ("step", "warmup")]
        assert steps[0]["ts"] == 0.0
        for a, b in itertools.pairwise(steps):
            assert b["ts"] == pytest.approx(a["ts"] + a["dur"], abs=0.002)


def test_written_for_an_imported_folder_of_rank_logs(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A folder of rank logs read as the GUI reads it: no step times, the compile phases only."""
    session = import_trace(logs_of("diverge"))
    assert logs_for(session) == logs_of("diverge") and logs_for(load_run("diverge")) is None
    out = tmp_path / "ranks.trace.json"
    write_multi_rank_trace(out, session, logs_for(session))
    trace = json.loads(out.read_text())["traceEvents"]
    _check_format(trace)
    frames = {r: [e for e in trace if e["pid"] == rank_pid(r) and e["name"] == "entire_frame_compile"
                  and e["ph"] == "B"] for r in (0, 1)}  # fmt: skip
    assert len(frames[0]) == 2 and len(frames[1]) == 4  # rank 1 compiled two frames more
    assert {e["args"]["compile_id"] for e in frames[1]} == {"0/0", "1/0", "2/0", "0/1"}


@pytest.mark.parametrize("name", ["slow_rank", "diverge"])
def test_a_script_runs_start_times_keep_the_one_rank_trace_exact(name: str) -> None:
    """Every rank's steps in the one-process trace of the timeline export: their starts are
    wall-clock times, small enough that no step overlaps the one before it once a reader
    rounds them to integer ns (counted from the Unix epoch they did)."""
    session = load_run(name)
    assert all(s.start_ms is not None and 0 <= s.start_ms < 86_400_000 for s in session.timeline)
    data = chrome_trace(session.timeline, session.timeline_events, session.mode_stats)
    assert data["otherData"]["steps"] == "real start times"
    check_trace_format(data["traceEvents"])


def test_steps_only_some_ranks_reached_are_left_out() -> None:
    session = load_run("slow_rank")
    kept = tuple(s for s in session.timeline if not (s.mode.startswith("r1:") and s.step > 5))
    cut = dataclasses.replace(session, timeline=kept)
    report = straggler_report(cut)
    (step,) = report.callables
    assert [x.step for x in step.steps] == [1, 2, 3, 4, 5]  # the steady steps both ranks ran
    assert [s.rank for s in report.stragglers] == [1]
    rank0 = tuple(s for s in session.timeline if s.mode.startswith("r0:"))
    one = dataclasses.replace(session, timeline=rank0)
    assert straggler_report(one).callables == () and straggler_report(one).stragglers == ()
