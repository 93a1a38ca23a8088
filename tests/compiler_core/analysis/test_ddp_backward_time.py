"""A DDP job's backward compile time is every bucket's: DDPOptimizer compiles one backward per
bucket under the frame's one compile id, each with its own `bwd_compilation_metrics` record. The
oracle is the real two-rank log read with `json` alone."""

from __future__ import annotations

import json
import lzma
from collections import defaultdict
from pathlib import Path

from compiler_core.analysis import import_trace

JOB = Path(__file__).resolve().parents[3] / "bench" / "corpus" / "logs" / "dist_ddp_train"


def _logged_backward_s(log: Path) -> dict[str, float]:
    total: dict[str, float] = defaultdict(float)
    with lzma.open(log, "rt") as f:
        for line in f:
            if '"bwd_compilation_metrics"' in line[:200]:
                m = json.loads(line[line.index("{"):])["bwd_compilation_metrics"]
                total[m["compile_id"]] += m.get("inductor_compile_time_s") or 0.0
    return dict(total)


def test_every_buckets_backward_compile_is_counted() -> None:
    session = import_trace(JOB)
    for rank in (0, 1):
        logged = _logged_backward_s(JOB / f"dedicated_log_torch_trace_rank_{rank}.log.xz")
        assert len(logged) >= 1
        for compile_id, seconds in logged.items():
            (c,) = [c for c in session.compiles if c.rank == rank and c.compile_id == compile_id]
            assert abs(c.metrics.stage_s["backward"] - seconds) < 1e-6, (rank, compile_id)


def test_a_comparison_counts_compile_time_as_the_overview_does() -> None:
    """The frame's compile plus its backward's (compiled at its first call, outside the frame's
    timers): a comparison that left the backward out would read less than the Overview does."""
    from compiler_core.diff import diff_sessions
    from compiler_core.overview.stage_facts import compile_total

    session = import_trace(JOB)
    backward = sum(sum(_logged_backward_s(JOB / f"dedicated_log_torch_trace_rank_{r}.log.xz").values())
                   for r in (0, 1))
    frames = sum(c.metrics.total_s or 0.0 for c in session.compiles)
    diff = diff_sessions(session, session)
    assert diff.total("compile s").before == sum(compile_total(c) for c in session.compiles)
    assert abs(diff.total("compile s").before - (frames + backward)) < 1e-6
    with_backward = [c for c in session.compiles if "backward" in c.metrics.stage_s]
    assert with_backward
    for cd in diff.compiles:  # each matched compile's total is the same sum
        (c,) = [c for c in session.compiles if c.rank == cd.rank and c.compile_id == cd.before]
        if cd.compile_s and c.metrics.total_s is not None:
            assert cd.compile_s[0].before == compile_total(c)
