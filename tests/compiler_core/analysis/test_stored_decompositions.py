"""Decomposition tables are built once with the session and stored in it.

The view (queries/decompositions.py) only looks them up; a file saved before they were stored
gets them when it is opened (analysis/saved_sessions.py) from the same build function; the
session layer's own decode leaves them out.
"""

from __future__ import annotations

import dataclasses
import json
import lzma
from pathlib import Path

from compiler_core.analysis import import_trace
from compiler_core.analysis.decompositions import with_decompositions
from compiler_core.queries.decompositions import decomposition_summary, decomposition_table
from compiler_core.session import load, loads
from compiler_core.session.codec import dumps
from compiler_core.session.codec import load as open_session
from tests.conftest import FIXTURES

ROOT = Path(__file__).resolve().parents[3]


def test_an_old_file_gets_the_tables_on_load_and_a_new_one_stores_them() -> None:
    path = FIXTURES / "transformer_block.json"
    assert '"decomposition"' not in path.read_text()  # a file saved before decompositions were stored
    assert all(c.decomposition is None for c in load(path).compiles)  # the decode alone
    session = open_session(path)
    c = next(c for c in session.compiles if c.decomposition is not None and c.decomposition.rows)
    rows = decomposition_table(session, c.compile_id, c.rank)
    assert any(r.decomposed for r in rows)
    assert any(r.kernels for r in rows) and any(r.backward_kernels for r in rows)
    assert decomposition_summary(session, c.compile_id, c.rank).ops_out
    # the same tables the builder makes, and written to the file from now on
    bare = dataclasses.replace(session, compiles=tuple(
        dataclasses.replace(x, decomposition=None) for x in session.compiles))
    assert with_decompositions(bare).compiles == session.compiles
    packed = json.loads(dumps(session))
    assert "decomposition" in packed["fields"]["Compile"] and loads(json.dumps(packed)) == session
    # the view only looks up: a session made in memory without them shows none
    assert decomposition_table(bare, c.compile_id, c.rank) == []


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
