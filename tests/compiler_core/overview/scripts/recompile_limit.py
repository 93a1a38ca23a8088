"""A frame that recompiles on every call until Dynamo's recompile limit sends it to eager."""

import torch

torch._dynamo.config.recompile_limit = 2


def scale(x: torch.Tensor, factor: float) -> torch.Tensor:
    return torch.relu(x) * factor


compiled = torch.compile(scale, dynamic=False)
x = torch.randn(16)
for step in range(5):
    compiled(x, step + 0.5)
