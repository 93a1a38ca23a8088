"""What a plain TORCH_TRACE log says about its run: torch version and device.

A log from torch itself has no `torch_version` artifact, but every `compilation_metrics` record
carries `torch_version`, and the generated wrapper allocates on its device
(`empty_strided_cuda`): the status bar must not say `device: ?  torch ?` for such a log.
"""

from __future__ import annotations

from tests.bench_logs import bench_session


def test_torch_version_and_device_come_from_the_log_itself() -> None:
    meta = bench_session("hf_llama_dynamic").meta
    assert meta.torch_version == "2.11.0+cu130"
    assert meta.device == "cuda"
