"""Kernels refused: one model file captured twice on CPU, the second time with Inductor's
`fallback_random` (set by the file itself when the environment asks), so `rand_like` moves from
a generated C++ kernel into an ATen fallback call; compared both ways round."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler_core.diff import as_dict, diff_sessions, session_text
from compiler_core.diff.hint_rerun import capture
from compiler_core.diff.kernel_swaps import extern_op
from compiler_core.worker.protocol import CaptureSpec

NOISE = '''"""Noise that Inductor draws in its own kernel, or from ATen where the environment asks."""
import os

import torch

if os.environ.get("TINY_FALLBACK_RANDOM"):
    torch._inductor.config.fallback_random = True


class Net(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x) * torch.rand_like(x)


model = Net()
example_inputs = (torch.randn(8, 8),)
'''


def test_the_op_an_extern_call_runs() -> None:
    assert extern_op("extern_kernels.mm:1") == "mm"
    assert extern_op("extern_kernels.addmm:12") == "addmm"
    assert extern_op("torch.ops.aten.rand_like.default:1") == "rand_like"
    assert extern_op("aten.randint.low_out:1") == "randint"
    assert extern_op("torch.ops.mylib.fused_thing.default:2") == "fused_thing"


@pytest.mark.slow
def test_an_op_moved_into_a_fallback_is_listed_as_refused(tmp_path: Path) -> None:
    model = tmp_path / "noise.py"
    model.write_text(NOISE)
    spec = CaptureSpec(model_path=str(model), out_path=str(tmp_path / "own.json"), train=False)
    own = capture(spec, cache_dir=tmp_path / "cache")
    spec = CaptureSpec(model_path=str(model), out_path=str(tmp_path / "aten.json"), train=False)
    aten = capture(spec, env={"TINY_FALLBACK_RANDOM": "1"}, cache_dir=tmp_path / "cache")

    (kd,) = diff_sessions(own, aten).compiles[0].kernels
    (swap,) = kd.swaps
    # torch 2.13 keeps rand_like whole, 2.11 decomposes it to rand first: the same swap either way
    assert swap.op in ("rand_like", "rand") and swap.to_extern
    assert swap.before.startswith("cpp_fused_") and swap.op in swap.before
    assert swap.after == f"torch.ops.aten.{swap.op}.default:1"
    assert swap.before in kd.removed and swap.after in kd.added
    # the seed call Inductor's own RNG needed goes too, but nothing generated took it over
    assert any(n.startswith("aten.randint") for n in kd.removed)
    assert f"refused: {swap.op}" in session_text(diff_sessions(own, aten))

    (back,) = diff_sessions(aten, own).compiles[0].kernels[0].swaps
    assert (back.op, back.to_extern, back.before, back.after) == (swap.op, False, swap.after, swap.before)
    assert as_dict(diff_sessions(aten, own))["compiles"][0]["kernels"][0]["swaps"][0]["op"] == swap.op
