"""Two gloo ranks that compile the same graphs; rank 1 is slow in every step.

The wait sits in a function Dynamo leaves to Python (both ranks break there alike), inside the
compiled callable the step timer times; the all_reduce after the call is where rank 0 waits.
"""

import argparse
import time

import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=10)
parser.add_argument("--delay-ms", type=float, default=40.0)
args = parser.parse_args()
# No FX-graph or AOT cache: one rank may otherwise read the entry its partner has just
# written (a real difference, but one that depends on timing)
torch._inductor.config.fx_graph_cache = False
torch._functorch.config.enable_autograd_cache = False
dist.init_process_group("gloo")
rank = dist.get_rank()


@torch._dynamo.disable
def load_batch() -> None:
    time.sleep(args.delay_ms / 1000.0 if rank == 1 else 0.0)


@torch.compile
def step(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    h = torch.tanh(x @ w)
    load_batch()
    return (h * 2).sum()


torch.manual_seed(0)
x, w = torch.randn(32, 32), torch.randn(32, 32)
for _ in range(args.steps):
    loss = step(x, w)
    dist.all_reduce(loss)
print(f"rank {rank} done: {loss.item():.3f}", flush=True)
dist.destroy_process_group()
