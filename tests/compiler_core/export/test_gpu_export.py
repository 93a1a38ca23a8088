"""A small CUDA capture exported and every file run: Triton harnesses build, launch and time their
kernel with `triton.testing.do_bench`, extern calls run on the GPU, output code and repros run.

Run on a GPU machine, from the repository root:

    python -m pytest tests/compiler_core/export/test_gpu_export.py -q -m gpu -p no:cacheprovider
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from compiler_core.export import export_compiles
from compiler_core.worker.client import WorkerClient
from compiler_core.worker.protocol import CaptureSpec
from tests.compiler_core.export.exported_runs import run_all
from tests.conftest import EXAMPLES

pytestmark = [pytest.mark.gpu, pytest.mark.slow]


@pytest.mark.timeout(1800)
def test_every_file_of_a_cuda_capture_runs(tmp_path: Path) -> None:
    spec = CaptureSpec(model_path=str(EXAMPLES / "transformer_block.py"), out_path=str(tmp_path / "s.json"),
                       device="cuda")  # fmt: skip
    client = WorkerClient(spec, timeout_s=600, cache_dir=tmp_path / "cache")
    assert client.run().ok, (client.error, client.stderr_tail[-3000:])
    session = client.recover_session()
    assert session is not None
    files = [p for p in export_compiles(session, tmp_path / "out") if p.suffix == ".py"]
    triton = [p for p in files if "__triton_" in p.name]
    assert triton
    # correctness only here (timing is the bench's): the files run side by side on the GPU host's cores
    runs = run_all(files, tmp_path / "inductor-cache", workers=min(8, os.cpu_count() or 2))
    for path, run in runs.items():
        assert run.returncode == 0, run
        if path in triton:
            timed = r": \d+\.\d+ us per launch \(triton\.testing\.do_bench(_cudagraph)?\)"
            assert re.search(timed, run.output), run
