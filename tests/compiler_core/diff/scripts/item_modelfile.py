"""A model file (compiler_core/modelfile.py) whose forward breaks the graph on `.item()`: the
mechanical fix is `capture_scalar_outputs=True`, applied by a re-run without editing this file."""

import torch


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Linear(8, 16)
        self.b = torch.nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.a(x))
        scale = h.mean().item()
        return self.b(h * scale)


torch.manual_seed(0)
model = Net()
example_inputs = (torch.randn(4, 8),)
