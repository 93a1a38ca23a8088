"""The run phase on CUDA: block-timed steps, warm-up marked, and a profile that sees the
kernels inside CUDA graphs (reduce-overhead) and the GPU's idle time.

Run on a GPU machine from the repository root (see bench/gpu_checks.sh):

    python -m pytest tests/compiler_core/timeline/test_gpu_timeline.py -q -m gpu -p no:cacheprovider \
        -o addopts="" -W ignore::pytest.PytestConfigWarning
"""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler_core.modelfile import load_model_file
from compiler_core.timeline import run_phase
from compiler_core.timeline.step_clock import BLOCK

pytestmark = [pytest.mark.gpu, pytest.mark.slow]

MLP = """\
import torch

model = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 256),
                            torch.nn.LayerNorm(256))
example_inputs = (torch.randn(64, 256),)
"""


def test_cuda_run_marks_warmup_and_profiles_kernels_inside_cuda_graphs(tmp_path: Path) -> None:
    path = tmp_path / "mlp.py"
    path.write_text(MLP)
    spec = load_model_file(path, device="cuda")
    samples, _events, stats = run_phase(spec, ["reduce-overhead"], 3 * BLOCK, "cuda")
    eager, ro = stats
    own = [s for s in samples if s.mode == "reduce-overhead" and not s.baseline_for]
    assert [s.step for s in own if s.warmup] == list(range(BLOCK))  # compile + CUDA-graph record
    assert all(s.ms > 0 for s in own) and ro.median_ms is not None and ro.baseline_ms is not None
    assert ro.cudagraph_graphs and ro.cudagraph_graphs >= 1
    prof = ro.runtime
    assert prof is not None and prof.busy_us_per_step and prof.busy_us_per_step > 0
    assert prof.cudagraph_us_per_step is not None and prof.cudagraph_us_per_step > 0.5 * prof.busy_us_per_step
    assert prof.idle_us_per_step is not None and prof.idle_us_per_step >= 0
    triton = [k for k in prof.kernels if k.kind == "kernel" and k.name.startswith("triton_")]
    assert triton and all(k.in_cudagraph for k in triton)
    # the GEMMs replayed in the graph keep no ATen scope, only their place in the launch order
    gemms = [k for k in prof.kernels if k.kind == "graph"]
    assert gemms and all(k.gap >= 0 and k.occurrence >= 1 for k in gemms)
    # kernel counts include extern GEMMs in every mode: eager runs 2 GEMMs, so does the graph
    assert eager.kernels and ro.kernels and ro.kernels >= 2
    assert eager.runtime is not None and eager.runtime.idle_us_per_step is not None
