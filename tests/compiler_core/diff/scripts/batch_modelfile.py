"""A model file called with a new batch size at each input step: each new size fails the
first compile's size guard on `x` dim 0, the recompile the `mark_dynamic(x, 0)` hint removes."""

import torch


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.a(x)).sum(dim=1)


torch.manual_seed(0)
model = Net()
example_inputs = (torch.randn(2, 8),)


def make_inputs(step: int) -> tuple[torch.Tensor]:
    return (torch.randn(3 + step, 8),)
