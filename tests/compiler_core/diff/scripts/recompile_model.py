"""A function called with three batch sizes, compiled under TORCH_TRACE.

argv[1] `static` lets the new sizes recompile it (Dynamo's automatic dynamic shapes turn dim 0
symbolic on the second size); `marked` calls `torch._dynamo.mark_dynamic(x, 0)` first, so one
compile serves every size. The pair is a recompile before and after the hint the recompile names.
"""

import sys

import torch

VARIANT = sys.argv[1] if len(sys.argv) > 1 else "static"


def step(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.tanh(x @ w).sum(dim=1)


compiled = torch.compile(step)
w = torch.randn(8, 8)
for batch in (2, 3, 5):
    x = torch.randn(batch, 8)
    if VARIANT == "marked":
        torch._dynamo.mark_dynamic(x, 0)
    compiled(x, w)
