"""CUDA captures: Triton kernels recorded with their fused nodes and links back to user lines.

Run on a GPU machine (torch 2.11+, triton, no Qt needed), from the repository root:

    python -m pytest tests/compiler_core/capture/test_gpu_capture.py -q -m gpu -p no:cacheprovider \
        -o addopts="" -W ignore::pytest.PytestConfigWarning
"""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler_core.session import LinkIndex, Ref, RefKind, Session
from compiler_core.worker.client import WorkerClient
from compiler_core.worker.protocol import CaptureSpec
from tests.conftest import EXAMPLES

pytestmark = [pytest.mark.gpu, pytest.mark.slow]


def _capture(name: str, out: Path) -> tuple[Session, WorkerClient]:
    spec = CaptureSpec(model_path=str(EXAMPLES / f"{name}.py"), out_path=str(out / f"{name}.json"),
                       device="cuda")
    client = WorkerClient(spec, timeout_s=600, cache_dir=out / "cache")
    assert client.run().ok, (client.error, client.stderr_tail[-3000:])
    session = client.recover_session()
    assert session is not None
    return session, client


def _triton_kernels_are_linked(session: Session, model_path: str) -> int:
    index = LinkIndex(session.links)
    count = 0
    for compiled in session.compiles:
        for out in compiled.inductor:
            assert out.post_grad is not None
            names = {n.name for n in out.post_grad.nodes}
            for kernel in out.kernels:
                if kernel.language != "triton" or not kernel.name.startswith("triton_"):
                    continue  # only Inductor-generated kernels carry fused nodes
                count += 1
                assert kernel.fused_nodes and set(kernel.fused_nodes) <= names, kernel.name
                ref = Ref.kernel(compiled.compile_id, out.graph, kernel.name)
                lines = [r for r in index.related(ref) if r.kind is RefKind.SOURCE_LINE]
                assert any(line.path == model_path for line in lines), kernel.name
    return count


def test_transformer_on_cuda_records_triton_kernels(tmp_path: Path) -> None:
    session, client = _capture("transformer_block", tmp_path)
    assert session.meta.device and session.meta.device != "cpu"
    assert {out.graph for c in session.compiles for out in c.inductor} == {"forward", "backward"}
    assert _triton_kernels_are_linked(session, client.spec.model_path) >= 4


def test_user_triton_op_is_captured_without_graph_break(tmp_path: Path) -> None:
    session, client = _capture("triton_add_relu", tmp_path)
    assert [b for c in session.compiles for b in c.graph_breaks] == []
    (compiled,) = session.compiles
    code = "\n".join(out.output_code for out in compiled.inductor)
    assert "add_relu_kernel" in code
    assert _triton_kernels_are_linked(session, client.spec.model_path) >= 1
