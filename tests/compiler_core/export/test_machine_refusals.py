"""A file generated for another machine says so in one line and exits 3 before it loads any
compiled code: another torch major.minor, a CUDA kernel on a machine without CUDA, C++ code
for a vector width this CPU lacks. The refusal is asserted explicitly, never a crash."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import torch

from compiler_core.analysis import import_trace
from compiler_core.export import REFUSED_EXIT, export_compiles
from compiler_core.export.machine_stamp import omp_threads, session_stamp, torch_minor, vector_bits
from compiler_core.session import Session, load
from tests.compiler_core.export.exported_runs import run_file
from tests.conftest import ROOT

SESSIONS = ROOT / "resources" / "sessions"
HERE = torch_minor(torch.__version__)


def _with_torch(session: Session, version: str) -> Session:
    return replace(session, meta=replace(session.meta, torch_version=version))


def _compiled_files(cache: Path) -> list[Path]:
    return [p for p in cache.rglob("*") if p.suffix in (".so", ".cpp", ".o")] if cache.exists() else []


def test_the_stamp_is_read_from_the_generated_code() -> None:
    """The bundled captures were made on a 256-bit (AVX2) machine; mlp's reduction is sized for
    two OpenMP threads (`tmp_acc0_arr[2]`), the transformer has no per-thread array."""
    mlp, transformer = load(SESSIONS / "mlp_graph_break.json"), load(SESSIONS / "transformer_block.json")
    assert session_stamp(mlp).as_dict() == {
        "device": "cpu",
        "torch": "2.13",
        "vector_bits": 256,
        "threads": 2,
    }
    assert session_stamp(transformer).threads == 0
    avx512 = "auto tmp0 = at::vec::Vectorized<float>::loadu(in_ptr0 + x0, static_cast<int64_t>(16));"
    tail = "auto tmp0 = at::vec::Vectorized<float>::loadu(in_ptr0 + x0, static_cast<int64_t>(3));"
    assert vector_bits([avx512, tail]) == 512 and vector_bits(["x = y[0];"]) == 0
    assert omp_threads(["float tmp_acc0_arr[8];", "for (int tid = 0; tid < 8; tid++)"]) == 8
    assert torch_minor("2.11.0+cu130") == "2.11" and torch_minor("nightly") == ""


@pytest.mark.slow
def test_files_for_another_torch_refuse_before_compiling_anything(tmp_path: Path) -> None:
    session = _with_torch(load(SESSIONS / "mlp_graph_break.json"), "2.99.0+cpu")
    files = [p for p in export_compiles(session, tmp_path / "out") if p.suffix == ".py"]
    kinds = {"cpp_fused", "extern_kernels", "output_code", "graph_repro"}
    assert all(any(k in p.name for p in files) for k in kinds)
    cache = tmp_path / "cache"
    for path in files:
        run = run_file(path, cache)
        assert run.returncode == REFUSED_EXIT, run
        assert run.output.strip() == (
            f"not run: generated for another machine; it needs torch 2.99 (this is torch {HERE}). "
            "Export it again from a session captured here."
        ), run
    assert _compiled_files(cache) == []


@pytest.mark.slow
def test_cpp_code_for_a_vector_width_this_cpu_lacks_refuses(tmp_path: Path) -> None:
    """2048-bit vectors exist on no CPU: the kernel, whose loops step by 64 floats, is refused."""
    session = load(SESSIONS / "mlp_graph_break.json")
    c = session.compiles[1]
    wide = tuple(
        replace(k, source=k.source.replace("static_cast<int64_t>(8)", "static_cast<int64_t>(64)"))
        for k in c.inductor[0].kernels
    )
    session = replace(session, compiles=(replace(c, inductor=(replace(c.inductor[0], kernels=wide),)),),
                      meta=replace(session.meta, torch_version=torch.__version__))  # only the width differs
    assert session_stamp(session).vector_bits == 2048
    files = export_compiles(session, tmp_path / "out")
    (kernel,) = [p for p in files if "cpp_fused_mul_0" in p.name]
    run = run_file(kernel, tmp_path / "cache")
    assert run.returncode == REFUSED_EXIT, run
    assert run.output.startswith(
        "not run: generated for another machine; it needs 2048-bit CPU vectors (this CPU offers "
    ), run
    (extern,) = [p for p in files if "extern_kernels" in p.name]  # no compiled code: no width check
    assert "'vector_bits': 0" in extern.read_text()


def test_triton_harnesses_are_generated_and_refuse_cleanly_without_cuda(tmp_path: Path) -> None:
    """A GPU corpus log, stamped with this torch so that only the missing GPU differs."""
    session = _with_torch(
        import_trace(str(ROOT / "bench" / "corpus" / "logs" / "hf_distilbert_infer.log.xz")),
        torch.__version__,
    )
    files = [p for p in export_compiles(session, tmp_path / "out") if p.suffix == ".py"]
    triton = [p for p in files if "__triton_" in p.name]
    assert len(triton) == 6
    for path in files:
        text = path.read_text()
        compile(text, str(path), "exec")
        assert "not runnable" not in text, path.name  # every launch rebuilt from the output code
    text = triton[0].read_text()
    assert "async_compile.triton(KERNEL, SOURCE, device_str='cuda')" in text
    assert "triton.testing.do_bench(" in text and "_storage(" in text and "'cuda')" in text
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: the refusal cannot be shown here")
    for path in (triton[0], next(p for p in files if "extern_kernels.addmm" in p.name)):
        run = run_file(path, tmp_path / "cache")
        assert run.returncode == REFUSED_EXIT, run
        assert run.output.strip() == (
            "not run: generated for another machine; it needs a CUDA GPU (none is "
            "available here). Export it again from a session captured here."
        ), run
