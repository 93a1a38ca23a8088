"""A plain training loop over HF GPT-2 (transformers, random init), written as users write them.

Nothing here knows about CompileScope: argparse, `torch.compile(model)`, AdamW, bf16 autocast on
CUDA, a synchronised wall-clock timer per step. It prints its own median step time, the figure
bench/script_run_overhead.py compares between a plain run and one under `compiler_core run`.
"""

import argparse
import statistics
import time

import torch
from transformers import GPT2Config, GPT2LMHeadModel

parser = argparse.ArgumentParser()
parser.add_argument("--layers", type=int, default=4)
parser.add_argument("--embd", type=int, default=768)
parser.add_argument("--heads", type=int, default=12)
parser.add_argument("--batch", type=int, default=8)
parser.add_argument("--seq", type=int, default=512)
parser.add_argument("--steps", type=int, default=100)
parser.add_argument("--warmup", type=int, default=10)
parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
args = parser.parse_args()

torch.manual_seed(0)
config = GPT2Config(n_layer=args.layers, n_embd=args.embd, n_head=args.heads, n_positions=args.seq)
model = GPT2LMHeadModel(config).to(args.device).train()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
compiled = torch.compile(model)
cuda = args.device.startswith("cuda")
sync = torch.cuda.synchronize if cuda else (lambda: None)
dtype = torch.bfloat16 if cuda else torch.float32

times = []
for step in range(args.warmup + args.steps):
    ids = torch.randint(0, config.vocab_size, (args.batch, args.seq), device=args.device)
    sync()
    t0 = time.perf_counter()
    with torch.autocast(args.device.split(":")[0], dtype=dtype, enabled=cuda):
        loss = compiled(input_ids=ids, labels=ids).loss
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    sync()
    if step >= args.warmup:
        times.append(time.perf_counter() - t0)
    if step == 0:
        print(f"first step (compile) {time.perf_counter() - t0:.1f} s, loss {loss.item():.3f}", flush=True)
print(f"MEDIAN_STEP_MS {statistics.median(times) * 1000:.4f} over {len(times)} steps", flush=True)
