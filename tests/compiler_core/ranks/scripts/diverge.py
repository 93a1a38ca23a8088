"""Two gloo ranks that compile different things from the same script.

Rank 1's input is positive, rank 0's is zero, so the `.item()` branch differs by rank: rank 1
runs its all_reduce eagerly (a disabled function, so its graph holds no collective where rank
0's does, and it compiles one frame more), and at step 2 it changes the shape of a side input,
so it alone recompiles. At run time both ranks still issue one all_reduce of the same size per
step, so the job itself completes.
"""

import argparse

import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=4)
args = parser.parse_args()
# No FX-graph or AOT cache: one rank may otherwise read the entry its partner has just
# written (a real difference, but one that depends on timing)
torch._inductor.config.fx_graph_cache = False
torch._functorch.config.enable_autograd_cache = False
dist.init_process_group("gloo")
rank = dist.get_rank()


@torch._dynamo.disable
def eager_all_reduce(t: torch.Tensor) -> torch.Tensor:
    dist.all_reduce(t)
    return t


@torch.compile
def step(x: torch.Tensor, side: torch.Tensor) -> torch.Tensor:
    y = torch.cos(x) * 3 + side.mean()
    if x.sum().item() > 0:  # rank 1 only
        y = eager_all_reduce(y * 2)
        return (y + 1).sum()
    dist.all_reduce(y)
    return (y - 1).sum()


x = torch.full((8, 4), float(rank))
for i in range(args.steps):
    side = torch.ones(6 if rank == 1 and i >= 2 else 4)
    out = step(x, side)
print(f"rank {rank} done: {out.item():.3f}", flush=True)
dist.destroy_process_group()
