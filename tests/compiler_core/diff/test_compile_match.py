"""Compiles match by frame and code location within their rank and run, never by id: real
sessions (the bundled graph-break example, a real two-rank log) renumbered, reordered and moved."""

from __future__ import annotations

import dataclasses as dc
import lzma
from pathlib import Path

from compiler_core.analysis import import_trace
from compiler_core.diff import diff_sessions, match_compiles
from compiler_core.session import Session, load
from tests.conftest import FIXTURES, ROOT


def _break_example() -> Session:
    return load(str(ROOT / "resources" / "sessions" / "mlp_graph_break.json"))


def test_renumbered_and_reordered_compiles_pair_by_frame() -> None:
    s = _break_example()
    assert [c.compile_id for c in s.compiles] == ["0/0", "1/0"]
    # the same compiles in the other order under each other's ids: an id match pairs them wrong
    pairs = zip(reversed(s.compiles), s.compiles, strict=True)
    swapped = dc.replace(s, compiles=tuple(dc.replace(c, compile_id=other.compile_id, frame_id=other.frame_id)
                                           for c, other in pairs))  # fmt: skip
    match = match_compiles(s.compiles, swapped.compiles)
    assert not match.only_before and not match.only_after
    for a, b in match.pairs:
        assert a.code == b.code and a.compile_id != b.compile_id
    diff = diff_sessions(s, swapped)
    assert all(g.same for c in diff.compiles for g in c.graphs)


def test_moved_lines_still_pair_the_frame_and_its_resume_function() -> None:
    s = _break_example()
    moved = []
    for c in s.compiles:
        assert c.code is not None
        line = c.code.line + 3
        fn = c.code.function.replace("_at_19", "_at_22")
        moved.append(dc.replace(c, code=dc.replace(c.code, line=line, function=fn)))
    match = match_compiles(s.compiles, moved)
    assert [(a.compile_id, b.compile_id) for a, b in match.pairs] == [("0/0", "0/0"), ("1/0", "1/0")]


def test_ranks_pair_within_their_rank() -> None:
    s = import_trace(FIXTURES / "traces" / "tp_2rank")
    assert sorted((c.rank, c.compile_id) for c in s.compiles) == [(0, "0/0"), (1, "0/0"), (1, "0/1")]
    diff = diff_sessions(s, s)
    assert [(c.rank, c.before, c.after) for c in diff.compiles] == [(0, "0/0", "0/0"), (1, "0/0", "0/0"),
                                                                    (1, "0/1", "0/1")]  # fmt: skip
    assert [(g.rank, g.compiles_before, g.compiles_after) for g in diff.groups] == [(0, 1, 1), (1, 2, 2)]
    # rank 1's recompile on its own: the other rank's frame is no counterpart
    only_rank0 = dc.replace(s, compiles=tuple(c for c in s.compiles if c.rank == 0))
    diff = diff_sessions(s, only_rank0)
    assert sorted((c.rank, c.compile_id) for c in diff.only_before) == [(1, "0/0"), (1, "0/1")]


def test_runs_pair_within_their_run(tmp_path: Path) -> None:
    """The corpus log of HF code compiled, `torch._dynamo.reset()`, compiled again (one process,
    torch 2.11 on an H100): two runs of the same five frames. Against its first run alone, the
    second run's compiles are the ones without a counterpart, not the first's."""
    log = tmp_path / "twice.log"
    with lzma.open(ROOT / "bench" / "corpus" / "logs" / "trouble_reset_twice.log.xz") as src:
        log.write_bytes(src.read())
    s = import_trace(log)
    assert sorted({c.run for c in s.compiles}) == [0, 1]
    first_run = dc.replace(s, compiles=tuple(c for c in s.compiles if c.run == 0))
    diff = diff_sessions(s, first_run)
    assert all(c.run == 0 and c.before == c.after for c in diff.compiles) and len(diff.compiles) == 5
    assert [c.compile_id for c in diff.only_before] == ["0/0#2", "1/0#2", "2/0#2", "3/0#2", "4/0#2"]
    assert [(g.run, g.compiles_before, g.compiles_after) for g in diff.groups] == [(0, 5, 5), (1, 5, 0)]
