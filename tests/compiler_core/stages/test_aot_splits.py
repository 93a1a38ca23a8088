"""DDPOptimizer's pieces: a compile holds one AOTAutograd forward, the last piece's, and says so.
Oracle: the real two-rank DDP log read with `json` alone (each `aot_forward_graph` record of the
compile id, in order: the one the session holds is the last)."""

from __future__ import annotations

import json
import lzma
import re
from pathlib import Path

from compiler_core.analysis import import_trace
from compiler_core.analysis.aot_splits import aot_pieces_note, ddp_pieces
from compiler_core.session import load
from tests.conftest import FIXTURES

JOB = Path(__file__).resolve().parents[3] / "bench" / "corpus" / "logs" / "dist_ddp_train"
_NODE = re.compile(r"^\s+(\w+)(?:: \"[^\"]*\")? = ", re.M)


def _forward_graphs(log: Path) -> dict[str, list[list[str]]]:
    """compile id -> the node names of each `aot_forward_graph` the log records, in order."""
    out: dict[str, list[list[str]]] = {}
    with lzma.open(log, "rt") as f:
        lines = iter(f)
        for line in lines:
            if '{"aot_forward_graph"' not in line:
                continue
            head = json.loads(line[line.index("{"):])
            cid = f"{head['frame_id']}/{head['frame_compile_id']}"
            payload = []
            for more in lines:
                if not more.startswith("\t"):
                    break
                payload.append(more[1:])
            out.setdefault(cid, []).append(_NODE.findall("".join(payload)))
    return out


def test_the_aot_graphs_shown_are_the_last_pieces_and_say_so() -> None:
    logged = _forward_graphs(JOB / "dedicated_log_torch_trace_rank_0.log.xz")
    split = {cid: graphs for cid, graphs in logged.items() if len(graphs) > 1}
    assert split  # DDPOptimizer split a frame in this job
    session = import_trace(JOB)
    for cid, graphs in split.items():
        (c,) = [c for c in session.compiles if c.rank == 0 and c.compile_id == cid]
        assert ddp_pieces(c) == len(graphs)
        assert c.aot is not None and c.aot.forward is not None
        assert [n.name for n in c.aot.forward.nodes if n.op == "call_function"] == graphs[-1]
        assert f"split this frame into {len(graphs)} graphs" in aot_pieces_note(c)


def test_a_compile_of_one_graph_says_nothing() -> None:
    session = load(FIXTURES / "transformer_block.json")
    assert all(ddp_pieces(c) == 1 and aot_pieces_note(c) == "" for c in session.compiles if c.aot)
