"""A model fed inputs whose batch and sequence length change between calls.

What to look for: compile 0/0 for the first shape, then recompiles (0/1, ...) whose reason names
the size guard that failed, and the guard diff between a compile and its recompile. After the
second distinct shape Dynamo marks the dimension dynamic (symbolic sizes such as `s0`).
"""

import torch
from torch import nn

model = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 32))
example_inputs = (torch.randn(8, 32),)

SHAPES = [8, 8, 16, 24, 16, 40]


def make_inputs(step: int) -> tuple[torch.Tensor, ...]:
    """Inputs for step `step`: the batch size changes, which invalidates Dynamo's guards."""
    return (torch.randn(SHAPES[step % len(SHAPES)], 32),)
