"""What a plain TORCH_TRACE log says about its run: torch version and device.

A log from torch itself has no `torch_version` artifact, but every `compilation_metrics` record
carries `torch_version`, and the generated wrapper allocates on its device
(`empty_strided_cuda`): the status bar must not say `device: ?  torch ?` for such a log.
"""

from __future__ import annotations

from pathlib import Path

from tests.bench_logs import bench_session


def test_torch_version_and_device_come_from_the_log_itself() -> None:
    meta = bench_session("hf_llama_dynamic").meta
    assert meta.torch_version == "2.11.0+cu130"
    assert meta.device == "cuda"


def test_a_given_meta_without_torch_version_gets_the_logs() -> None:
    """A crashed capture is rebuilt from its trace with meta made in the torch-free client
    (capture_outcome.recover_session), which knows no torch version: the log's fills it."""
    import lzma
    import shutil
    import tempfile
    from pathlib import Path

    from compiler_core.analysis import import_trace
    from compiler_core.session import SessionMeta
    from tests.bench_logs import DATA

    log = Path(tempfile.mkdtemp(prefix="cs-meta-")) / "hf_llama_dynamic.log"
    with lzma.open(DATA / "hf_llama_dynamic.log.xz") as src, log.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    meta = import_trace(log, meta=SessionMeta(device="NVIDIA H200", mode="default", origin="capture")).meta
    assert (meta.torch_version, meta.device, meta.mode) == ("2.11.0+cu130", "NVIDIA H200", "default")


def test_a_cpu_log_reads_cpu_though_its_wrapper_defines_empty_strided_cuda() -> None:
    """Inductor's CPU wrapper binds `empty_strided_cuda = ...` too: every CPU log read "cuda"."""
    from compiler_core.analysis import import_trace
    from tests.cpu_logs import cpu_log

    log = cpu_log("tiny_model.py")
    text = log.path.read_text()
    assert "empty_strided_cuda = " in text and "empty_strided_cuda(" not in text  # the trap is there
    assert import_trace(log.path).meta.device == "cpu"


def test_gpu_logs_read_cuda(shared_traces: Path) -> None:
    """Real GPU logs: tlparse's CUDA provenance log, and bench/data's H200 runs (above)."""
    from compiler_core.analysis import import_trace

    cuda_log = shared_traces / "inputs" / "inductor_provenance_jit_cuda_log.txt"
    assert import_trace(cuda_log).meta.device == "cuda"
    assert bench_session("hf_llama_infer").meta.device == "cuda"
