"""A small torchrun job that leaves per-rank TORCH_TRACE logs for CompileScope to open.

Run on a machine with ≥ 2 GPUs:

    TORCH_TRACE=/tmp/trace_ddp torchrun --nproc-per-node 2 ddp_fsdp_job.py --wrap ddp
    TORCH_TRACE=/tmp/trace_fsdp torchrun --nproc-per-node 2 ddp_fsdp_job.py --wrap fsdp2
    TORCH_TRACE=/tmp/trace_tp torchrun --nproc-per-node 2 ddp_fsdp_job.py --wrap tp

then `python -m compiler_core summary /tmp/trace_ddp` (or open the directory in the app).
DDP and FSDP2 run their collectives in hooks around the graphs. On torch 2.11,
`torch.compile(DDP(model))` graph-breaks inside DDP's own forward and captures nothing of the
model (seen on 2×H200), so `ddp` compiles the inner module and `fsdp2` compiles each layer before
sharding, as torchtitan does. `tp` is a row-parallel MLP whose functional all-reduce Dynamo traces
*into* the graph. Under ddp/fsdp2, rank 1 feeds a different sequence length on its last step, so
the ranks' recompile counts differ (under tp that would mismatch the all-reduce sizes and hang NCCL:
the shipped tp fixture was recorded that way and shows rank 1's extra recompile).
"""

from __future__ import annotations

import argparse
import os

import torch
import torch.distributed as dist
from torch import nn


def build_model(dim: int) -> nn.Module:
    return nn.Sequential(
        nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim), nn.LayerNorm(dim),
        nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim),
    )


class RowParallelMLP(nn.Module):
    """Each rank holds half the hidden units; a functional all-reduce sums the partial outputs."""

    def __init__(self, dim: int, world: int) -> None:
        super().__init__()
        self.up = nn.Linear(dim, 4 * dim // world)
        self.down = nn.Linear(4 * dim // world, dim, bias=False)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        from torch.distributed import _functional_collectives as fc

        partial = self.down(torch.nn.functional.gelu(self.up(x)))
        return self.norm(x + fc.all_reduce(partial, "sum", dist.group.WORLD))


def wrap(model: nn.Module, how: str, device: torch.device) -> nn.Module:
    """Return the module to train; compilation happens where it captures the model."""
    if how == "ddp":
        from torch.nn.parallel import DistributedDataParallel

        return DistributedDataParallel(torch.compile(model), device_ids=[device.index], bucket_cap_mb=1)
    if how == "tp":
        return torch.compile(RowParallelMLP(model[0].in_features, dist.get_world_size()).to(device))
    from torch.distributed.fsdp import fully_shard

    for i, layer in enumerate(model):
        model[i] = torch.compile(layer)
        if isinstance(layer, nn.Linear):
            fully_shard(model[i])
    fully_shard(model)
    return model


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--wrap", choices=["ddp", "fsdp2", "tp"], default="ddp")
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--dim", type=int, default=256)
    args = parser.parse_args()
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", rank)))
    torch.cuda.set_device(device)
    torch.manual_seed(0)
    model = wrap(build_model(args.dim).to(device), args.wrap, device)
    compiled = model
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    for step in range(args.steps):
        vary = args.wrap != "tp" and rank == 1 and step == args.steps - 1
        seq = 96 if vary else 64
        x = torch.randn(8, seq, args.dim, device=device)
        loss = compiled(x).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
    torch.cuda.synchronize()
    if rank == 0:
        print(f"{args.wrap}: {args.steps} steps done, loss {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
