"""Decomposition tables are built once with the session and stored in it (issue 18.2).

The view (stages/decompositions.py) only looks them up; a session saved before they were
stored gets them from the same build function, and both give the very same rows.
"""

from __future__ import annotations

import dataclasses
import lzma
from pathlib import Path

from compiler_core.build import import_trace
from compiler_core.build.decompositions import with_decompositions
from compiler_core.session import load, loads
from compiler_core.session.codec import dumps
from compiler_core.stages import decomposition_summary, decomposition_table
from tests.conftest import FIXTURES

ROOT = Path(__file__).resolve().parents[3]


def test_an_old_session_shows_the_same_rows_as_one_that_stores_them() -> None:
    old = load(FIXTURES / "transformer_block.json")
    assert all(c.decomposition is None for c in old.compiles)  # saved before issue 18
    stored = loads(dumps(with_decompositions(old)))  # and through the codec
    c = next(c for c in stored.compiles if c.decomposition is not None and c.decomposition.rows)
    legacy_rows = decomposition_table(old, c.compile_id, c.rank)
    rows = decomposition_table(stored, c.compile_id, c.rank)
    assert rows == legacy_rows and any(r.decomposed for r in rows)
    assert any(r.kernels for r in rows) and any(r.backward_kernels for r in rows)
    summary = decomposition_summary(stored, c.compile_id, c.rank)
    assert summary == decomposition_summary(old, c.compile_id, c.rank) and summary.ops_out


def test_import_stores_the_table_and_the_view_only_joins_it(tmp_path: Path) -> None:
    log = tmp_path / "resnet.log"
    log.write_bytes(lzma.decompress((ROOT / "bench" / "data" / "tv_resnet_breaks.log.xz").read_bytes()))
    session = import_trace(log)
    built = [c for c in session.compiles if c.dynamo_graph is not None]
    assert built and all(c.decomposition is not None for c in built)
    c = max(built, key=lambda c: len(c.decomposition.rows) if c.decomposition else 0)
    assert c.decomposition is not None and len(c.decomposition.rows) > 50
    # what the view shows is what is stored: dropping the stored table changes the rows
    rows = decomposition_table(session, c.compile_id, c.rank)
    assert [r.dynamo_node for r in rows] == [d.dynamo_node for d in c.decomposition.rows]
    emptied = dataclasses.replace(c, decomposition=dataclasses.replace(c.decomposition, rows=()))
    other = dataclasses.replace(session, compiles=tuple(emptied if x is c else x for x in session.compiles))
    assert decomposition_table(other, c.compile_id, c.rank) == []
    kernels = {k.name for o in c.inductor for k in o.kernels}
    assert {k.name for r in rows for k in (*r.kernels, *r.backward_kernels)} <= kernels
