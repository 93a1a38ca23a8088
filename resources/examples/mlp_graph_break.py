"""An MLP with a data-dependent `.item()` call: Dynamo breaks the graph there.

What to look for: two Dynamo graphs in frame 0 with a graph break between them whose reason
mentions `Tensor.item()`; the Source pane marks the `scale = ...item()` line.
"""

import torch
from torch import nn


class GatedMLP(nn.Module):
    def __init__(self, dim: int = 64, hidden: int = 128) -> None:
        super().__init__()
        self.up = nn.Linear(dim, hidden)
        self.down = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.up(x))
        scale = h.mean().item()  # graph break: a Python float from a tensor
        return self.down(h * scale)


model = GatedMLP()
example_inputs = (torch.randn(32, 64),)
