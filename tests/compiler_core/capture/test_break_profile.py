"""A profiled step attributes the eager `.item()` after a graph to the break that ended it."""

from __future__ import annotations

import torch

from compiler_core.capture.break_profile import profile_eager_gaps


class Gated(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up, self.down = torch.nn.Linear(16, 32), torch.nn.Linear(32, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.up(x))
        scale = h.mean().item()  # graph break: frame 0's graph ends here, aten::item runs eagerly
        return self.down(h * scale)


def test_eager_item_is_charged_to_the_first_graph() -> None:
    torch._dynamo.reset()
    compiled = torch.compile(Gated())
    x = torch.randn(8, 16)
    with torch.no_grad():
        compiled(x)  # compile outside the profile
        gaps = profile_eager_gaps(lambda: compiled(x))
    assert set(gaps) == {"0/0", "1/0"}
    assert gaps["0/0"].ops == 1 and gaps["0/0"].ms > 0  # aten::item (its _local_scalar_dense nests)
    assert gaps["1/0"].ops == 0  # the resume frame's graph runs to the end: nothing eager after it
