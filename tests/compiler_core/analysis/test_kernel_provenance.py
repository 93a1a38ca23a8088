"""Kernel-line marks checked against Inductor's own provenance.

Two real sources: the `Graph fragment` comment Inductor writes above every generated kernel (the
post-grad nodes it lowered, in HF Llama's H200 training log, bench/data) and the
`inductor_provenance_tracking_node_mappings` artifact (`cppCodeToPost`) of a CPU capture. A line
that computes something (not a load) may only name nodes of its own kernel.
"""

from __future__ import annotations

import json
import lzma
import re
from pathlib import Path

import pytest

from compiler_core.analysis.compile_builder import _kernels
from compiler_core.analysis.compile_records import Partition
from compiler_core.session.model import Kernel
from compiler_core.trace.fx_text import parse_graph

ROOT = Path(__file__).resolve().parents[3]
LLAMA = ROOT / "bench" / "data" / "hf_llama_train.log.xz"
_LOAD = re.compile(r"tl\.load\(|loadu\(|\b(?:in_out|in)_ptr\d+\s*\[")
_FRAGMENT_NODE = re.compile(r"^#\s+%(\w+) : .*= call_function\[", re.M)
_KERNEL_DEF = re.compile(r"^(\w+) = async_compile\.(?:triton|cpp_pybinding|cpp)\('(\w+)'", re.M)


def _first_payloads(path: Path, names: tuple[str, ...]) -> dict[str, str]:
    """The first payload of each named record, read straight from the log (no session build)."""
    found: dict[str, str] = {}
    current = ""
    body: list[str] = []
    with lzma.open(path, "rt") as f:
        for line in f:
            if line.startswith("\t"):
                if current:
                    body.append(line[1:])
                continue
            if current and current not in found:
                found[current] = "".join(body)
            current, body = next((n for n in names if f'"{n}"' in line and n not in found), ""), []
            if len(found) == len(names):
                break
    return found


def _fragments(output_code: str) -> dict[str, set[str]]:
    """Kernel name → the call_function nodes of the `Graph fragment` comment above it."""
    out: dict[str, set[str]] = {}
    for block in output_code.split("# kernel path:")[1:]:
        m = _KERNEL_DEF.search(block)
        if m:
            out[m.group(1)] = set(_FRAGMENT_NODE.findall(block[: m.start()]))
    return out


def _outside(kernel: Kernel, allowed: set[str]) -> list[tuple[int, str, str]]:
    lines = kernel.source.split("\n")
    bad = []
    for ln, nodes in kernel.line_nodes.items():
        text = lines[int(ln) - 1]
        if _LOAD.search(text):
            continue
        bad += [(int(ln), text.strip(), n) for n in nodes if n not in allowed]
    return bad


@pytest.fixture(scope="module")
def llama_forward() -> list[Kernel]:
    payloads = _first_payloads(LLAMA, ("inductor_post_grad_graph", "inductor_output_code"))
    post = parse_graph(payloads["inductor_post_grad_graph"], "post_grad", "forward")
    part = Partition(post_grad_text=payloads["inductor_post_grad_graph"],
                     output_code=payloads["inductor_output_code"], name="forward")  # fmt: skip
    return _kernels(part, post)


def test_llama_kernel_lines_stay_inside_inductors_graph_fragment(llama_forward: list[Kernel]) -> None:
    code = _first_payloads(LLAMA, ("inductor_output_code",))["inductor_output_code"]
    fragments = _fragments(code)
    checked = 0
    for k in llama_forward:
        if k.language == "extern" or k.name not in fragments:
            continue
        assert _outside(k, fragments[k.name]) == [], k.name
        checked += sum(len(v) for v in k.line_nodes.values())
    assert checked > 100


def test_llama_embedding_rmsnorm_kernel_lines(llama_forward: list[Kernel]) -> None:
    """The issue's kernel: broadcast_to is not a dtype conversion, the embedding store is not mul_3."""
    k = next(k for k in llama_forward if k.name.startswith("triton_per_fused__to_copy_add_embedding"))
    by_text = {line.strip(): k.line_nodes.get(str(i), ()) for i, line in enumerate(k.source.split("\n"), 1)}

    def nodes(prefix: str) -> tuple[str, ...]:
        return next(v for t, v in by_text.items() if t.startswith(prefix))

    assert nodes("tmp9 = tl.broadcast_to(tmp8") == ("pow_1",)
    assert nodes("tl.store(out_ptr0") == ("embedding",)
    assert nodes("tmp6 = tl.load(in_ptr1") == ("embedding",)  # the gather is the embedding
    assert nodes("tmp2 = tmp0 + tmp1") == ()  # index wrap-around, not the variance's + eps
    assert nodes("tmp16 = tmp14 + tmp15") == ("add_3",)
    assert nodes("tmp17 = libdevice.rsqrt") == ("rsqrt",)
    assert nodes("tl.store(out_ptr1") == ("mul_3",)


def test_llama_extern_matmuls_own_only_their_node(llama_forward: list[Kernel]) -> None:
    """An extern call is its own node, not the statement group the comment above it names."""
    mms = [k for k in llama_forward if k.name.startswith("extern_kernels.mm:")]
    assert len(mms) > 100
    assert all(len(k.fused_nodes) == 1 and k.fused_nodes[0].startswith("mm") for k in mms)
    assert len({k.fused_nodes for k in mms}) == len(mms)


@pytest.mark.slow
def test_cpu_capture_lines_inside_cpp_code_to_post(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    from compiler_core.analysis import import_trace

    out = tmp_path / "s.json"
    subprocess.run([sys.executable, "-m", "compiler_core", "capture",
                    str(ROOT / "resources/examples/transformer_block.py"), "-o", str(out), "-q"],
                   env=dict(os.environ, PYTHONPATH=str(ROOT)), check=True, cwd=ROOT, timeout=900)  # fmt: skip
    log = out.with_suffix(".trace.log")
    lines = log.read_text().split("\n")
    provenance: dict[str, set[str]] = {}
    for i, line in enumerate(lines):
        if "inductor_provenance_tracking_node_mappings" in line:
            for key, nodes in json.loads(lines[i + 1][1:]).get("cppCodeToPost", {}).items():
                provenance.setdefault(key.rsplit(":", 1)[0], set()).update(nodes)
    assert provenance
    session = import_trace(log)
    checked = 0
    for o in session.compiles[0].inductor:
        for k in o.kernels:
            if k.language == "extern" or k.name not in provenance:
                continue
            assert _outside(k, provenance[k.name]) == [], k.name
            assert set(k.fused_nodes) <= provenance[k.name]
            checked += sum(len(v) for v in k.line_nodes.values())
    assert checked > 50
