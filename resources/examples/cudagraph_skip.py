"""A step that CUDA graphs must skip: the compiled function mutates one of its inputs.

GPU only (`requires = "cuda"`). Under mode="reduce-overhead" Inductor wraps each compiled graph
in a CUDA graph, unless something makes replaying it unsafe. Here `forward` updates a running
statistic in place (`self.running.mul_(0.9).add_(...)` on a buffer the caller passes in), so
Inductor logs "skipping cudagraphs due to mutated inputs" and runs the kernels one launch at a
time. What to look for: the CUDA Graphs pane marks this graph "skipped" with that reason and
the user line that mutates; compare launches per step against the transformer, which is captured.
"""

import torch

requires = "cuda"


class RunningNorm(torch.nn.Module):
    def __init__(self, dim: int = 256) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, running: torch.Tensor) -> torch.Tensor:
        y = self.lin(x)
        running.mul_(0.9).add_(y.detach().mean(0), alpha=0.1)  # input mutation: no CUDA graph
        return torch.relu(y - running)


device = "cuda" if torch.cuda.is_available() else "cpu"
model = RunningNorm().to(device)


def example_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    return (torch.randn(64, 256, device=device), torch.zeros(256, device=device))


compile_options = {"mode": "reduce-overhead"}
