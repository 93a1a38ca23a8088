"""A DDP training job on two gloo ranks, as users write it, with a rank that differs.

`--mode diverge`: rank 1's batch is shifted, so an `.item()` test in the forward takes the
other branch on rank 1 only (an extra op in its resumed graph). `--mode slow`: rank 1 waits
40 ms in every forward (a function Dynamo leaves to Python on both ranks). DDPOptimizer splits
the compiled body at DDP's 1 MiB buckets on both ranks; DDP's gradient all_reduce runs in the
backward, so the slow rank's wait shows in its own forward's time.
"""

import argparse
import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

parser = argparse.ArgumentParser()
parser.add_argument("--mode", choices=["diverge", "slow", "same"], default="same")
parser.add_argument("--steps", type=int, default=6)
args = parser.parse_args()
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


@torch._dynamo.disable
def load_wait() -> None:
    time.sleep(0.04 if args.mode == "slow" and rank == 1 else 0.0)


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.ReLU())
                                          for _ in range(4)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.body(x)
        load_wait()
        if x.mean().item() > 5.0:  # rank 1's batch, with --mode diverge
            h = h * 0.5
        return h.square().mean()


torch.manual_seed(0)
model = torch.compile(DistributedDataParallel(Net().to(device), bucket_cap_mb=1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
shift = 10.0 if args.mode == "diverge" and rank == 1 else 0.0
for _ in range(args.steps):
    loss = model(torch.randn(8, 512, device=device) + shift)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"rank {rank} done", flush=True)
dist.destroy_process_group()
