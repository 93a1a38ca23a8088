"""Decomposition tables are built once with the session and stored in it.

The view (queries/decompositions.py) only looks them up; a file saved before they were stored
gets them from bench/convert_sessions.py, by the same build function; a load never builds them.
"""

from __future__ import annotations

import dataclasses
import lzma
from pathlib import Path

import msgspec

from compiler_core.analysis import import_trace
from compiler_core.analysis.decompositions import with_decompositions
from compiler_core.queries.decompositions import decomposition_summary, decomposition_table
from compiler_core.session import load, loads
from compiler_core.session.codec import dumps
from tests.bench_scripts import bench_module
from tests.conftest import FIXTURES

ROOT = Path(__file__).resolve().parents[3]


def test_an_old_file_gets_the_tables_when_converted_and_a_load_builds_nothing() -> None:
    session = load(FIXTURES / "transformer_block.json")
    c = next(c for c in session.compiles if c.decomposition is not None and c.decomposition.rows)
    rows = decomposition_table(session, c.compile_id, c.rank)
    assert any(r.decomposed for r in rows)
    assert any(r.kernels for r in rows) and any(r.backward_kernels for r in rows)
    assert decomposition_summary(session, c.compile_id, c.rank).ops_out
    # the same tables the builder makes
    bare = dataclasses.replace(session, compiles=tuple(
        dataclasses.replace(x, decomposition=None) for x in session.compiles))
    assert with_decompositions(bare).compiles == session.compiles
    # a file saved before they were stored (schema 1) gets them from the converter
    old = msgspec.to_builtins(bare)
    old["schema_version"] = 1
    assert bench_module("legacy_sessions").legacy_session(old).compiles == session.compiles
    # a load is the decode alone: what a file lacks stays absent, and the view only looks up
    assert loads(dumps(bare)) == bare
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
