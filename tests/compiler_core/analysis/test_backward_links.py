"""Forward op ↔ backward ops and recomputed nodes, on real CPU captures (the bundled transformer and
a 2-layer HF Llama from transformers), and on the same logs stripped to torch's own text graphs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from compiler_core.analysis import import_trace
from compiler_core.queries.summary import summarize
from compiler_core.session import LinkIndex, Ref, Session
from compiler_core.session.model import Compile, Graph, Node

ROOT = Path(__file__).resolve().parents[3]


def _capture(tmp: Path, model: str, **env: str) -> Path:
    """A real capture through the CLI (worker process, recording backend); returns its trace log."""
    out = tmp / "session.json"
    cmd = [sys.executable, "-m", "compiler_core", "capture", str(ROOT / model), "-o", str(out), "-q"]
    run_env = dict(os.environ, PYTHONPATH=str(ROOT), **env)
    subprocess.run(cmd, env=run_env, check=True, cwd=ROOT, capture_output=True, timeout=900)
    return out.with_suffix(".trace.log")


@pytest.fixture(scope="module")
def transformer_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _capture(tmp_path_factory.mktemp("tb"), "resources/examples/transformer_block.py")


@pytest.fixture(scope="module")
def llama_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _capture(tmp_path_factory.mktemp("llama"), "bench/models/hf_llama_train.py", CS_LAYERS="2")


def _train_compile(session: Session) -> Compile:
    c = next(c for c in session.compiles if c.aot is not None and c.aot.backward is not None)
    assert c.aot is not None and c.aot.forward is not None and c.aot.backward is not None
    return c


def _needs_gradient(fw: Graph, dynamo: Graph | None = None) -> list[Node]:
    """Forward call nodes with a floating-point value that depends on a floating-point input
    other than a buffer: `primals_k` is Dynamo's k-th placeholder, and Dynamo names a lifted
    buffer `..._buffers_...` (transformers 5.24 lifts Llama's bf16 rotary `inv_freq`, which
    needs no gradient)."""
    by_name = {n.name: n for n in fw.nodes}
    lifted = [n.name for n in dynamo.nodes if n.op == "placeholder"] if dynamo is not None else []
    buffers = {f"primals_{k + 1}" for k, name in enumerate(lifted) if "_buffers_" in name}
    float_inputs = {n.name for n in fw.nodes
                    if n.op == "placeholder" and _is_float(n) and n.name not in buffers}
    reach: set[str] = set(float_inputs)
    for n in fw.nodes:
        if n.op.startswith("call_") and any(i in reach for i in n.inputs):
            reach.add(n.name)
    return [by_name[r] for r in reach if by_name[r].op.startswith("call_") and _is_float(by_name[r])]


def _is_float(n: Node) -> bool:
    return any(m.dtype.startswith(("float", "bfloat16")) for m in n.outputs)


def _partitioner_marked(bw: Graph) -> set[str]:
    """Backward nodes tagged `is_forward`: at the default budget exactly what the partitioner
    recomputed (below it, a forward op can be moved to the backward without being recomputed;
    test_recomputed_nodes.py checks the count against the partitioner's own log line)."""
    calls = (n for n in bw.nodes if n.op.startswith("call_"))
    return {n.name for n in calls if n.attrs.get("partitioner_tag") == "is_forward"}


def _strip_metadata(log: Path, out: Path) -> Path:
    """The same log without our `compilescope_graph` records: what a plain TORCH_TRACE holds."""
    lines = log.read_text().split("\n")
    keep: list[str] = []
    skipping = False
    for line in lines:
        if line.startswith("\t"):
            if not skipping:
                keep.append(line)
            continue
        skipping = '"compilescope_graph"' in line
        if not skipping:
            keep.append(line)
    out.write_text("\n".join(keep))
    return out


def _check_partners_and_recompute(log: Path) -> Session:
    session = import_trace(log)
    c = _train_compile(session)
    aot = c.aot
    assert aot is not None and aot.forward is not None and aot.backward is not None
    needing = _needs_gradient(aot.forward, c.dynamo_graph)
    assert needing
    missing = [n.name for n in needing if not aot.backward_of.get(n.name)]
    assert not missing, missing
    bw_names = {n.name for n in aot.backward.nodes}
    assert all(set(p) <= bw_names for p in aot.backward_of.values())
    assert set(aot.backward_via.values()) <= {"seq_nr", "original_aten", "via_user"}
    assert "seq_nr" in set(aot.backward_via.values())
    marked = _partitioner_marked(aot.backward)
    assert marked and set(aot.recomputed) == marked
    assert not marked & set(p for ps in aot.backward_of.values() for p in ps)  # partners are real bw ops
    assert aot.recomputed_bytes > 0
    s = summarize(session)
    assert s["recomputed_nodes"] == len(marked)
    assert s["backward_links"] == len(aot.backward_of) >= len(needing)
    # the partners are links in the session, found through the index (not recomputed by a pane)
    index = LinkIndex(session.links)
    name, partners = next((k, v) for k, v in aot.backward_of.items() if aot.backward_via[k] == "seq_nr")
    related = index.related(Ref.aot_node(c.compile_id, "forward", name, c.rank))
    assert {Ref.aot_node(c.compile_id, "backward", p, c.rank) for p in partners} <= related
    return session


@pytest.mark.slow
def test_transformer_partners_and_recomputed(transformer_log: Path, tmp_path: Path) -> None:
    session = _check_partners_and_recompute(transformer_log)
    aot = _train_compile(session).aot
    assert aot is not None
    # GELU's erf: its backward is gelu_backward's decomposition, the same autograd seq_nr
    erf = aot.backward_of["erf"]
    assert aot.backward_via["erf"] == "seq_nr" and any("exp" in p for p in erf)
    # the fused SDPA replaced its decomposition in a joint pass and lost seq_nr: paired by ATen op
    sdpa = next(k for k in aot.backward_of if k.startswith("_scaled_dot_product"))
    assert aot.backward_via[sdpa] == "original_aten"
    assert any("backward" in p for p in aot.backward_of[sdpa])

    # torch's own text graphs carry no seq_nr nor tags: recomputed nodes keep their forward names,
    # so the count is the same; partners come from source lines, and say so
    plain = import_trace(_strip_metadata(transformer_log, tmp_path / "plain.log"))
    plain_aot = _train_compile(plain).aot
    assert plain_aot is not None
    assert set(plain_aot.recomputed) == set(aot.recomputed)
    assert set(plain_aot.backward_via.values()) <= {"source_line", "via_user"}
    assert len(plain_aot.backward_of) >= len(aot.backward_of) * 0.8


@pytest.mark.slow
def test_hf_llama_partners_and_recomputed(llama_log: Path) -> None:
    session = _check_partners_and_recompute(llama_log)
    aot = _train_compile(session).aot
    assert aot is not None and aot.forward is not None
    # a q_proj matmul's backward: the two grad matmuls of the same linear (seq_nr)
    mm_partners = [aot.backward_of[n.name] for n in aot.forward.nodes if n.target.endswith("mm.default")]
    assert mm_partners and all(any("mm" in p for p in ps) for ps in mm_partners)
