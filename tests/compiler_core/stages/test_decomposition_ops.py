"""The Decompositions pane's Op column names ops, also for a log read from its text, where a
Dynamo operator node's target is its Python expression (`variance + 1e-06`, `q_arange[`)."""

from __future__ import annotations

import re

from compiler_core.queries.decompositions import decomposition_table
from tests.bench_logs import bench_session


def test_ops_of_a_logs_dynamo_graph_are_names_not_code() -> None:
    session = bench_session("hf_llama_infer")
    c = next(c for c in session.compiles if c.decomposition is not None and c.decomposition.rows)
    rows = decomposition_table(session, c.compile_id, c.rank)
    ops = {r.op for r in rows}
    code = sorted(op for op in ops if not re.fullmatch(r"[\w.]+", op))
    assert not code, code
    assert {"add", "mul", "getitem"} <= ops
