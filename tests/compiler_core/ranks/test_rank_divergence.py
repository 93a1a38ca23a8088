"""What differs between ranks, read from real multi-rank logs and recorded two-rank runs.

The recorded runs (rank_data.py) are real `run --nproc 2` sessions of gloo scripts on CPU;
tlparse's multi-rank test logs and the corpus's H100 DDP/FSDP logs are real jobs too.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from compiler_core.analysis import import_trace
from compiler_core.cli import main as cli_main
from compiler_core.ranks.collectives import collective_op, compile_collectives
from compiler_core.ranks.graph_hash import first_difference, structural_hash
from compiler_core.ranks.rank_divergence import compiles_by_rank, normalised, rank_divergence, session_ranks
from compiler_core.ranks.rank_sets import groups_text, rank_groups, ranks_text
from compiler_core.session.model import Session
from compiler_core.session.vocab import Partition
from tests.compiler_core.ranks.rank_data import DATA, fan_out, load_run
from tests.conftest import ROOT

CORPUS = ROOT / "bench" / "corpus" / "logs"


def _by(diffs: list, aspect: str, cid: str) -> object:
    found = [d for d in diffs if d.aspect == aspect and d.compile_id == cid]
    assert len(found) == 1, [d.text() for d in diffs]
    return found[0]


def test_a_rank_that_takes_another_branch_is_named_with_what_differs() -> None:
    session = load_run("diverge")
    diffs = rank_divergence(session)
    assert diffs and all(d.ranks == (1,) for d in diffs)
    # the resumed frame after `.item()`: rank 0 reduces inside the graph, rank 1 multiplies first
    graph = _by(diffs, "graph", "1/0")
    assert "node 1" in graph.detail and "`mul`" in graph.detail and "all_reduce" in graph.detail
    coll = _by(diffs, "collectives", "1/0")
    assert "rank 1 diverges at collective #0" in coll.detail
    assert "all_reduce float32[8, 4] 128 B" in coll.detail
    assert "disable" in _by(diffs, "breaks", "1/0").detail
    # the frame after the eager all_reduce and the side input's recompile exist on rank 1 only
    assert _by(diffs, "compiles", "2/0").groups == (((0,), "not compiled"), ((1,), "compiled"))
    recompile = _by(diffs, "compiles", "0/1")
    assert "size mismatch" in recompile.detail and "'side'" in recompile.detail
    # the frame both ranks compile alike is not reported
    assert not [d for d in diffs if d.compile_id == "0/0"]
    text = groups_text(rank_groups(session_ranks(session), diffs))
    assert text.startswith("rank 0 as reference; rank 1 differs in graph 1/0") and "compiles 0/1" in text


def test_sixteen_ranks_with_one_odd_rank_read_as_people_say_it() -> None:
    """The recorded run fanned out to 16 ranks, rank 7 being the one that took the other branch."""
    session = fan_out(load_run("diverge"), 16, {7: 1})
    diffs = rank_divergence(session)
    assert diffs and all(d.ranks == (7,) for d in diffs)
    text = groups_text(rank_groups(session_ranks(session), diffs))
    assert text.startswith("ranks 0-6, 8-15 identical; rank 7 differs in graph 1/0, breaks 1/0")
    coll = _by(diffs, "collectives", "1/0")
    assert coll.groups[0][0] == tuple(r for r in range(16) if r != 7)
    assert "rank 7 diverges at collective #0" in coll.detail


def test_ranks_that_compile_the_same_agree_whatever_their_device_and_object_ids() -> None:
    session = load_run("slow_rank")  # a disabled function on both ranks: ID guards differ per process
    assert rank_divergence(session) == []
    assert groups_text(rank_groups(session_ranks(session), [])) == "ranks 0-1 identical"
    by_rank = compiles_by_rank(session)
    g0, g1 = by_rank[0]["0/0"].dynamo_graph, by_rank[1]["0/0"].dynamo_graph
    assert g0 is not None and g1 is not None
    assert structural_hash(g0) == structural_hash(g1) and first_difference(g0, g1) is None
    # H100 DDP and FSDP: every guard on a tensor names the rank's own device (device=0, device=1)
    assert rank_divergence(import_trace(CORPUS / "dist_ddp_train")) == []
    assert rank_divergence(import_trace(CORPUS / "dist_fsdp_train")) == []
    guard = "check_tensor(L['x'], device=1, 0x7f00aa) and ___check_obj_id(L['m'], 140212345678)"
    assert normalised(guard) == "check_tensor(L['x'], device=N, 0x?) and ___check_obj_id(L['m'], N)"


def test_tlparse_multi_rank_logs_failed_ranks_and_recompiles_on_some_ranks(shared_traces: Path) -> None:
    session = import_trace(shared_traces / "inputs" / "multi_rank_logs")
    diffs = rank_divergence(session)
    status = _by(diffs, "status", "0/0")
    assert status.groups[0][0] == (0, 2) and "failed" in status.groups[0][1]
    assert {g for g, _ in status.groups[1:]} == {(1,), (3,)} or {g for g, _ in status.groups[1:]} == {(1, 3)}
    assert "BackendCompilerFailed" in status.detail
    # rank 1 recompiles 15 times, rank 3 7 times
    assert _by(diffs, "compiles", "0/1").groups[1][0] == (1, 3)
    assert _by(diffs, "compiles", "0/10").groups == (((0, 2, 3), "not compiled"), ((1,), "compiled"))
    text = groups_text(rank_groups(session_ranks(session), diffs))
    assert text.startswith("ranks 0, 2 identical; rank 1 differs in status 0/0")


def test_collectives_with_sizes_in_order_and_ranks_that_stop_early(shared_traces: Path) -> None:
    session = import_trace(shared_traces / "inputs" / "multi_rank_runtime")
    c = compiles_by_rank(session)[0]["0/1"]
    ops = [x.op for x in compile_collectives(c)]
    assert ops[:1] == ["all_reduce"] and {"all_gather_into_tensor", "reduce_scatter_tensor"} <= set(ops)
    assert all(x.bytes and x.bytes > 0 and x.graph for x in compile_collectives(c))
    diffs = rank_divergence(session)
    assert _by(diffs, "compiles", "0/2").groups == (((0, 1, 2, 3, 4), "compiled"), ((5, 6), "not compiled"))
    assert not [d for d in diffs if d.aspect == "collectives"]  # who compiled, issues the same
    # ranks 5-6 guard a bound method where the others guard a function, and stop after 0/1
    assert groups_text(rank_groups(session_ranks(session), diffs)) == \
        "ranks 0-4 identical; ranks 5-6 differ in guards 0/0, guards 0/1, compiles 0/2, compiles 0/3"
    schedule = import_trace(shared_traces / "inputs" / "multi_rank_schedule")
    assert len(session_ranks(schedule)) == 3 and rank_divergence(schedule) == []


def test_a_collective_issued_in_another_order_is_found_at_its_position(shared_traces: Path) -> None:
    """Two real ranks; rank 2's post-grad graph gets its first two collectives swapped."""
    session = import_trace(shared_traces / "inputs" / "multi_rank_runtime")
    target = next(c for c in session.compiles if c.rank == 2 and c.compile_id == "0/1")
    out = target.inductor[0]
    assert out.post_grad is not None
    nodes = list(out.post_grad.nodes)
    idx = [i for i, n in enumerate(nodes) if collective_op(n.target)]
    head = nodes[idx[0]]
    first = next(i for i in idx if (nodes[i].outputs, nodes[i].target) != (head.outputs, head.target))
    nodes[idx[0]], nodes[first] = nodes[first], nodes[idx[0]]
    # the text a log gives for that graph changes with it (values are kept per text)
    text = out.post_grad.text + "\n# collectives reordered"
    graph = dataclasses.replace(out.post_grad, nodes=tuple(nodes), text=text)
    swapped = dataclasses.replace(out, post_grad=graph)
    changed = dataclasses.replace(target, inductor=(swapped, *target.inductor[1:]))
    compiles = tuple(changed if c is target else c for c in session.compiles)
    perturbed = dataclasses.replace(session, compiles=compiles)
    diff = _by(rank_divergence(perturbed), "collectives", "0/1")
    assert diff.ranks == (2,) and "rank 2 diverges at collective #0" in diff.detail


def test_ddp_optimizer_splits_per_rank() -> None:
    session = import_trace(CORPUS / "dist_ddp_train")
    ddp = compiles_by_rank(session)[1]["4/0"]
    assert sum(1 for o in ddp.inductor if o.graph == Partition.FORWARD) == 7  # 7 buckets, both ranks
    fewer = dataclasses.replace(ddp, inductor=ddp.inductor[1:])
    perturbed = Session(meta=session.meta, compiles=tuple(fewer if c is ddp else c for c in session.compiles))
    diff = _by(rank_divergence(perturbed), "splits", "4/0")
    assert "rank 1 compiled 6 forward + 7 backward graphs, rank 0 7 forward + 7 backward" in diff.detail


def test_ranks_written_as_people_write_them() -> None:
    assert ranks_text([0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15]) == "0-6, 8-15"
    assert ranks_text([7], word=True) == "rank 7" and ranks_text([1, 3], word=True) == "ranks 1, 3"


def test_summary_prints_rank_divergence_and_stragglers(capsys: pytest.CaptureFixture[str],
                                                       shared_traces: Path) -> None:
    assert cli_main(["summary", str(shared_traces / "inputs" / "multi_rank_schedule")]) == 0
    agree = json.loads(capsys.readouterr().out)
    assert agree["rank_divergence"] == [] and agree["stragglers"] == []
    assert agree["rank_groups"] == "ranks 0-2 identical"
    assert cli_main(["summary", str(DATA / "diverge" / "trace")]) == 0
    differ = json.loads(capsys.readouterr().out)
    assert {(d["aspect"], d["compile_id"]) for d in differ["rank_divergence"]} >= {
        ("graph", "1/0"), ("collectives", "1/0"), ("compiles", "0/1")}
    assert all(d["ranks"] == [1] for d in differ["rank_divergence"])


def test_a_rank_whose_log_holds_nothing_differs_in_every_compile_and_one_rank_compares_nothing() -> None:
    session = load_run("slow_rank")
    silent = dataclasses.replace(session, compiles=tuple(c for c in session.compiles if c.rank == 0))
    diffs = rank_divergence(silent)  # rank 1 is in the meta (its log was read) but compiled nothing
    assert {(d.aspect, d.ranks) for d in diffs} == {("compiles", (1,))}
    assert len(diffs) == len({c.compile_id for c in silent.compiles})
    alone = dataclasses.replace(silent, meta=dataclasses.replace(silent.meta, ranks=(0,)))
    assert rank_divergence(alone) == []
