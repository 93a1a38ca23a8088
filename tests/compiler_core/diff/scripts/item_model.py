"""A training step whose forward reads a scalar with `.item()`, compiled under TORCH_TRACE.

argv[1] picks the variant: `item` (the break as written), `capture` (the same code with
`capture_scalar_outputs=True`, so the scalar stays in the graph) or `fixed` (the `.item()`
refactored away into a tensor op). Each variant is one real log of one pair to compare.
"""

import sys

import torch

VARIANT = sys.argv[1] if len(sys.argv) > 1 else "item"


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Linear(8, 16)
        self.b = torch.nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.a(x))
        if VARIANT == "fixed":  # noqa: SIM108 (the line with .item() stays a line of its own, as a user has it)
            scale = h.mean()
        else:
            scale = h.mean().item()
        return self.b(h * scale)


if VARIANT == "capture":
    torch._dynamo.config.capture_scalar_outputs = True
torch.manual_seed(0)
model = torch.compile(Net())
model(torch.randn(4, 8)).sum().backward()
