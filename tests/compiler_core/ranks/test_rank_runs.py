"""Live two-rank runs on CPU (gloo, real torch.compile, `run --nproc 2`), plain, DDP and FSDP2:
ranks that diverge, a rank that is slow, ranks that agree; each read back and compared as the
app does. (The same jobs on two GPUs with NCCL need a GPU machine: not run here.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler_core.ranks.rank_divergence import compiles_by_rank, rank_divergence
from compiler_core.ranks.rank_trace import compile_phases, logs_for, multi_rank_trace, rank_pid
from compiler_core.ranks.stragglers import straggler_report
from compiler_core.run.client import ScriptClient
from compiler_core.run.spec import ScriptSpec
from compiler_core.session.codec import load
from compiler_core.session.model import Session
from tests.compiler_core.ranks.rank_data import SCRIPTS

pytestmark = pytest.mark.slow


def _run(tmp_path: Path, script: str, *args: str) -> tuple[Session, Path]:
    spec = ScriptSpec(model_path=str(SCRIPTS / script), out_path=str(tmp_path / "s.json"),
                      script_args=tuple(args), cwd=str(tmp_path), nproc=2)  # fmt: skip
    client = ScriptClient(spec, timeout_s=600, echo=False)
    client.run()
    assert client.exit is not None and client.exit.ok, client.stderr_tail[-3000:]
    return load(tmp_path / "s.json"), Path(spec.resolved_trace_path)


def test_a_rank_dependent_item_branch_makes_rank_1_diverge(tmp_path: Path) -> None:
    session, _ = _run(tmp_path, "diverge.py")
    diffs = rank_divergence(session)
    found = {(d.aspect, d.compile_id) for d in diffs}
    assert {("graph", "1/0"), ("breaks", "1/0"), ("collectives", "1/0"), ("compiles", "2/0"),
            ("compiles", "0/1")} <= found  # fmt: skip
    assert all(d.ranks == (1,) for d in diffs)
    assert not [d for d in diffs if d.compile_id == "0/0"]  # the frame both ranks trace alike


def test_a_rank_that_sleeps_in_its_step_is_the_straggler_and_the_trace_shows_both(tmp_path: Path) -> None:
    session, logs = _run(tmp_path, "slow_rank.py", "--steps", "8", "--delay-ms", "30")
    assert rank_divergence(session) == []
    (straggler,) = straggler_report(session).stragglers
    assert straggler.rank == 1 and 0.8 * 30.0 <= straggler.median_lag_ms < 300.0  # the sleep, about
    assert all(s.start_ms is not None for s in session.timeline)  # each step's host start, kept
    assert logs_for(session, tmp_path / "s.json") == logs
    data = multi_rank_trace(session, compile_phases(logs))
    assert data["otherData"]["steps"].startswith("real start times")
    trace = data["traceEvents"]
    for r in (0, 1):
        assert sum(1 for e in trace if e["pid"] == rank_pid(r) and e.get("cat") in ("step", "warmup")) == 8
        assert any(e["pid"] == rank_pid(r) and e["name"] == "entire_frame_compile" for e in trace)


def test_ranks_that_do_the_same_work_agree_and_none_straggles(tmp_path: Path) -> None:
    session, _ = _run(tmp_path, "slow_rank.py", "--steps", "8", "--delay-ms", "0")
    assert session.meta.ranks == (0, 1)
    assert rank_divergence(session) == []
    assert straggler_report(session).stragglers == ()


def test_ddp_ranks_whose_item_branch_differs(tmp_path: Path) -> None:
    """DDP + torch.compile on gloo: DDPOptimizer splits the body alike on both ranks; the
    resumed frame after the `.item()` test holds an extra op on rank 1."""
    session, _ = _run(tmp_path, "ddp_ranks.py", "--mode", "diverge", "--steps", "4")
    diffs = rank_divergence(session)
    assert diffs and all(d.ranks == (1,) for d in diffs)
    graphs = [d for d in diffs if d.aspect == "graph"]
    assert graphs and all("rank 1 has `h` (call_function _operator.mul" in d.detail for d in graphs)
    assert not [d for d in diffs if d.aspect in ("splits", "compiles")]  # same frames, same buckets
    by_rank = compiles_by_rank(session)
    split = [c for c in by_rank[0].values() if sum(o.graph == "forward" for o in c.inductor) > 1]
    assert split  # the DDP-split body: several forward graphs in one compile, on both ranks


def test_ddp_rank_that_waits_in_its_forward_is_the_straggler(tmp_path: Path) -> None:
    session, _ = _run(tmp_path, "ddp_ranks.py", "--mode", "slow", "--steps", "6")
    assert rank_divergence(session) == []
    (straggler,) = straggler_report(session).stragglers
    assert straggler.rank == 1 and straggler.label == "DistributedDataParallel"
    assert 0.8 * 40.0 <= straggler.median_lag_ms < 400.0


def test_fsdp2_ranks_whose_item_branch_differs(tmp_path: Path) -> None:
    """FSDP2 (`fully_shard` per block, each block compiled) on gloo: the resumed frame after the
    `.item()` test computes on rank 1 and is empty on rank 0; rank 1 alone recompiles it."""
    session, _ = _run(tmp_path, "fsdp_ranks.py")
    diffs = rank_divergence(session)
    assert diffs and all(d.ranks == (1,) for d in diffs)
    found = {(d.aspect, d.compile_id) for d in diffs}
    assert {("status", "1/0"), ("graph", "1/0")} <= found
    assert "only rank 1 has a Dynamo graph" in next(d.detail for d in diffs if d.aspect == "graph")
    alone = [d for d in diffs if d.aspect == "compiles"]
    assert alone and any("a recompile" in d.detail for d in alone)
    assert not [d for d in diffs if d.compile_id == "0/0"]  # the blocks' first frames agree
