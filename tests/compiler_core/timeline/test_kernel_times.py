"""Where the time goes, joined for real: a CPU capture of the bundled transformer with a short
run phase has each mode's profiled kernel times joined to its kernels, post-grad nodes and
source lines, and the joins add up."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from compiler_core.analysis.kernel_times import extern_op, join_runtime
from compiler_core.session import Ref, RefKind, Session
from compiler_core.session.model import KernelTime
from compiler_core.worker.client import WorkerClient
from compiler_core.worker.protocol import CaptureSpec
from tests.conftest import EXAMPLES

MODEL = EXAMPLES / "transformer_block.py"


def test_extern_kernel_names_give_op_and_call_number() -> None:
    assert extern_op("extern_kernels.mm:3") == ("mm", 3)
    assert extern_op("extern_kernels.addmm:1") == ("addmm", 1)
    assert extern_op("torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default:1") == (
        "_scaled_dot_product_flash_attention_for_cpu", 1)
    assert extern_op("cpp_fused_gelu_0") is None


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Session:
    out = tmp_path_factory.mktemp("kernel-times")
    spec = CaptureSpec(model_path=str(MODEL), out_path=str(out / "s.json"), steps=12, modes="default")
    client = WorkerClient(spec, timeout_s=600, cache_dir=out / "cache")
    assert client.run().ok, (client.error, client.stderr_tail[-3000:])
    loaded = client.recover_session()
    assert loaded is not None
    return loaded


def _by_kind(times: dict[str, float]) -> dict[RefKind, dict[Ref, float]]:
    out: dict[RefKind, dict[Ref, float]] = {}
    for encoded, us in times.items():
        ref = Ref.decode(encoded)
        out.setdefault(ref.kind, {})[ref] = us
    return out


@pytest.mark.slow
def test_profiled_kernel_times_reach_kernels_nodes_and_source_lines(session: Session) -> None:
    stats = {s.mode: s for s in session.mode_stats}
    default = stats["default"]
    assert default.runtime is not None and default.runtime.steps > 0
    times = _by_kind(default.time_by_ref)
    kernels = times[RefKind.KERNEL]
    session_kernels = {(c.compile_id, out.graph, k.name): k for c in session.compiles
                       for out in c.inductor for k in out.kernels}
    # C++ kernels of forward and backward, and extern calls, all got a time
    parts = {r.graph for r in kernels}
    assert parts == {"forward", "backward"}
    assert any(r.name.startswith("cpp_fused_") for r in kernels)
    assert any(r.name.startswith("extern_kernels.") for r in kernels)
    for ref in kernels:
        assert (ref.compile_id, ref.graph, ref.name) in session_kernels
    joined = [k for k in default.runtime.kernels if k.kind in ("kernel", "extern") and k.call >= 0
              and not k.name.startswith(("empty", "as_strided"))]
    assert len(kernels) >= 0.8 * len(joined)
    # the per-node and per-line figures are shares of the per-kernel ones
    total = sum(kernels.values())
    assert sum(times[RefKind.POST_GRAD_NODE].values()) == pytest.approx(total, rel=1e-6)
    lines = times[RefKind.SOURCE_LINE]
    assert all(Path(r.path).name == "transformer_block.py" for r in lines)
    # nodes that link to no user line (views, the loss's reshapes) keep their share off the lines
    assert 0.5 * total <= sum(lines.values()) <= total * (1 + 1e-9)
    assert len(lines) >= 3
    # eager has no compiled kernels: its profile lists ATen ops, and joins nothing
    eager = stats["eager"]
    assert eager.runtime is not None and not eager.time_by_ref
    assert {k.kind for k in eager.runtime.kernels} == {"eager"}
    assert any(k.name in ("mm", "addmm", "linear") for k in eager.runtime.kernels)


@pytest.mark.slow
def test_saved_activation_bytes_sit_beside_peak_memory(session: Session) -> None:
    saved = sum(t.bytes for c in session.compiles if c.aot is not None for t in c.aot.saved_tensors)
    stats = {s.mode: s for s in session.mode_stats}
    assert saved > 0 and stats["default"].saved_bytes == saved
    assert stats["default"].peak_mem_bytes and stats["eager"].saved_bytes is None
    # the CLI summary carries both, and the kernels that took the most time
    from compiler_core.queries.summary import summarize

    default = summarize(session)["timeline"]["default"]
    assert default["saved_bytes"] == saved and default["peak_mem_bytes"]
    top = default["top_kernels_us_per_step"]
    assert len(top) == 5 and list(top.values()) == sorted(top.values(), reverse=True)


@pytest.mark.slow
def test_cuda_graph_launch_order_finds_the_extern_calls_the_aten_scopes_name(session: Session) -> None:
    """A CUDA-graph replay keeps no ATen scope, only its launch order: a GEMM replayed there is
    known by how many Inductor kernels ran before it. On CPU every extern call is named by its
    scope and records that same place, so the real profile checks the launch-order join: each
    extern, stripped of its op name as a replay would report it, lands on the same kernel."""
    default = {s.mode: s for s in session.mode_stats}["default"]
    prof = default.runtime
    assert prof is not None
    by_scope = _by_kind(join_runtime(session, prof))[RefKind.KERNEL]
    externs = [k for k in prof.kernels if k.kind == "extern" and k.call >= 0 and k.gap >= 0]
    joined = [k for k in externs
              if _by_kind(join_runtime(session, replace(prof, kernels=(k,)))).get(RefKind.KERNEL)]
    per_gap: dict[tuple[int, int], list[KernelTime]] = {}
    for k in joined:
        per_gap.setdefault((k.call, k.gap), []).append(k)
    alone = [ks[0] for ks in per_gap.values() if len(ks) == 1]
    assert len(alone) >= 3  # the transformer's GEMMs sit between fused kernels
    for k in alone:
        expected = _by_kind(join_runtime(session, replace(prof, kernels=(k,))))[RefKind.KERNEL]
        as_replayed = KernelTime(f"gemm_kernel_{k.name}", "graph", k.call, 1, k.us_per_step,
                                 k.calls_per_step, True, k.gap)
        got = _by_kind(join_runtime(session, replace(prof, kernels=(as_replayed,))))[RefKind.KERNEL]
        assert got == expected, (k, got, expected)
    # gaps with several extern calls share their replayed kernels' time, none of it lost
    many = [k for ks in per_gap.values() if len(ks) > 1 for k in ks]
    replayed = tuple(KernelTime("gemm", "graph", k.call, 1, k.us_per_step, 1.0, True, k.gap)
                     for k in many[:1])
    if replayed:
        got = _by_kind(join_runtime(session, replace(prof, kernels=replayed)))[RefKind.KERNEL]
        assert sum(got.values()) == pytest.approx(replayed[0].us_per_step)
    assert by_scope  # the ordinary join still sees every scope-named kernel
