"""Ranks that logged the same compile get the same links, renamed per rank, without relinking."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from compiler_core.analysis import import_trace, link_memo
from compiler_core.analysis.link_memo import _prefix_end, _renamed
from compiler_core.session.links import LinkBuilder, LinkIndex
from compiler_core.session.model import Compile

TRACES = Path(__file__).resolve().parents[2] / "fixtures" / "traces"


def _rank_of(ref: str) -> str:
    return ref.split("|")[1]


def test_identical_ranks_are_linked_once_with_every_link_renamed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for rank in (0, 1, 2):
        target = tmp_path / f"dedicated_log_torch_trace_rank_{rank}_x.log.gz"
        shutil.copy(TRACES / "tlparse_simple.log.gz", target)
    calls: list[int | None] = []
    real = link_memo.link_compile

    def counting(lb: LinkBuilder, c: Compile, *args: Any) -> None:
        calls.append(c.rank)
        real(lb, c, *args)

    monkeypatch.setattr(link_memo, "link_compile", counting)
    session = import_trace(tmp_path)
    per_rank = len(session.compiles) // 3
    assert len(calls) == per_rank  # rank 0 linked, ranks 1 and 2 renamed
    by_rank: dict[str, set[tuple[str, str]]] = {}
    for a, targets in session.links.items():
        for b in targets:
            assert _rank_of(a) == _rank_of(b)  # never a link across ranks
            assert a in session.links[b]
            by_rank.setdefault(_rank_of(a), set()).add((a.split("|", 2)[2], b.split("|", 2)[2]))
    assert set(by_rank) == {"0", "1", "2"} and by_rank["0"] == by_rank["1"] == by_rank["2"]
    # the same links as linking every rank on its own
    def unmemoised(self: link_memo.LinkMemo, i: int, c: Compile, pre_to_post: dict[str, list[str]]) -> None:
        real(self.lb, c, pre_to_post, self.user_files)

    monkeypatch.setattr(link_memo.LinkMemo, "link", unmemoised)
    assert import_trace(tmp_path).links == session.links


def test_renaming_refuses_refs_it_cannot_place() -> None:
    assert _prefix_end("aot_node|0|0/0|forward:mm") == len("aot_node|0|0/0|")
    assert _prefix_end("no-bars") == 0
    prefixes = {"aot_node|0|0/0|": "aot_node|1|0/0|", "kernel|0|0/0|": "kernel|1|0/0|"}
    adjacency: dict[str, tuple[str, ...]] = {"aot_node|0|0/0|a": ("kernel|0|0/0|k",),
                                             "kernel|0|0/0|k": ("aot_node|0|0/0|a",)}  # fmt: skip
    assert _renamed(adjacency, prefixes) == {"aot_node|1|0/0|a": ("kernel|1|0/0|k",),
                                             "kernel|1|0/0|k": ("aot_node|1|0/0|a",)}  # fmt: skip
    assert _renamed({"guard|0|9/9|1": ()}, prefixes) is None  # another compile's prefix
    assert _renamed({"aot_node|0|0/0|a": ("kernel|0|0/0|gone",)}, prefixes) is None  # one-sided


def test_identical_ranks_share_one_decomposition_table_equal_to_each_built_alone(tmp_path: Path) -> None:
    """A rank that got another's links renamed gets its decomposition table too (the table holds
    names only); each equals the table built for that compile alone."""
    from compiler_core.analysis.decompositions import compile_decomposition

    for rank in (0, 1, 2):
        target = tmp_path / f"dedicated_log_torch_trace_rank_{rank}_x.log.gz"
        shutil.copy(TRACES / "tlparse_simple.log.gz", target)
    session = import_trace(tmp_path)
    tables = [c for c in session.compiles if c.decomposition is not None and c.decomposition.rows]
    assert {c.rank for c in tables} == {0, 1, 2}
    by_id: dict[str, list[Compile]] = {}
    for c in tables:
        by_id.setdefault(c.compile_id, []).append(c)
    shared = [cs for cs in by_id.values() if len(cs) == 3]
    assert shared and all(cs[1].decomposition is cs[0].decomposition is cs[2].decomposition for cs in shared)
    for c in tables:
        assert c.decomposition == compile_decomposition(c, LinkIndex(session.links))
