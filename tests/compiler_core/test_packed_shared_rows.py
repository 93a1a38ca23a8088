"""Graphs shared between ranks are encoded once and still decode into every compile."""

from __future__ import annotations

import shutil
from dataclasses import fields
from pathlib import Path

from compiler_core.analysis import import_trace
from compiler_core.session import dumps_bytes, loads
from compiler_core.session.model import Compile, Session
from compiler_core.session.packed import pack

LOG = Path(__file__).resolve().parents[1] / "fixtures" / "traces" / "tlparse_simple.log.gz"


def test_identical_ranks_share_graph_rows_and_round_trip(tmp_path: Path) -> None:
    for rank in (0, 1):  # two ranks that logged the same compile, as data-parallel ranks do
        shutil.copy(LOG, tmp_path / f"dedicated_log_torch_trace_rank_{rank}_x.log.gz")
    session = import_trace(tmp_path)
    by_rank = {c.rank: c for c in session.compiles if c.dynamo_graph is not None}
    assert set(by_rank) == {0, 1}
    assert by_rank[0].dynamo_graph is by_rank[1].dynamo_graph  # the build's parse memo shares it
    packed = pack(session)
    at_compiles = [f.name for f in fields(Session)].index("compiles")
    at_graph = [f.name for f in fields(Compile)].index("dynamo_graph")
    rows = [row[at_graph] for row in packed["session"][at_compiles] if len(row) > at_graph and row[at_graph]]
    assert len(rows) == 2 and rows[0] is rows[1]  # one encoding, referenced by both ranks
    again = loads(dumps_bytes(session))
    assert again == session
    assert again.compiles[0].dynamo_graph == again.compiles[-1].dynamo_graph
