"""An FSDP2 training job on two gloo ranks: each block sharded with `fully_shard` and compiled
on its own, as FSDP2 users do; rank 1's batch is shifted, so an `.item()` test in each block
takes the other branch on rank 1 only (its resumed frame holds an op, rank 0's none) and rank 1
alone recompiles it. FSDP's all-gathers and reduce-scatters run in its hooks, outside the graphs.
With the argument `slow`, no rank takes the branch and rank 1 waits 40 ms in every block's forward
instead (a function Dynamo leaves to Python on both ranks).
"""

import os
import sys
import time

import torch
import torch.distributed as dist
from torch.distributed.fsdp import fully_shard

# No FX-graph or AOT cache: one rank may otherwise read the entry its partner has just
# written (a real difference, but one that depends on timing)
torch._inductor.config.fx_graph_cache = False
torch._functorch.config.enable_autograd_cache = False
# RANKS_DEVICE=cuda: the same job on one GPU per rank over NCCL (the recorded GPU runs)
device = os.environ.get("RANKS_DEVICE", "cpu")
if device == "cuda":
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
dist.init_process_group("nccl" if device == "cuda" else "gloo")
rank = dist.get_rank()
slow = sys.argv[1:] == ["slow"]


@torch._dynamo.disable
def load_wait() -> None:
    time.sleep(0.04 if rank == 1 else 0.0)


torch.manual_seed(0)


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(64, 64)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.lin(x))
        if slow:  # a constant to Dynamo: no break without `slow`
            load_wait()
        if x.mean().item() > 5.0:  # rank 1's batch
            h = h * 0.5
        return h


net = torch.nn.Sequential(*[Block() for _ in range(2)]).to(device)
for block in net:
    fully_shard(block)
    block.compile()
fully_shard(net)
opt = torch.optim.SGD(net.parameters(), lr=0.01)
shift = 10.0 if rank == 1 and not slow else 0.0
for _ in range(6 if slow else 3):
    loss = net(torch.randn(8, 64, device=device) + shift).square().mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"rank {rank} done", flush=True)
dist.destroy_process_group()
