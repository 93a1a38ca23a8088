"""TROUBLE (b), recompiles from shape changes: HF transformers GPT2LMHeadModel (6 layers) inference
called at sequence length 32, then 48, then 64 (batch 2). The second length fails the static-shape
guard and recompiles with a dynamic sequence dimension (automatic dynamic shapes); 64 then reuses it."""

import sys
from pathlib import Path

import torch
from transformers import GPT2Config, GPT2LMHeadModel

sys.path.insert(0, str(Path(__file__).parent))
from _common import Logits, facts, hf_config, hf_model, layers, pick

config = hf_config(GPT2Config, n_embd=pick(384, 64), n_layer=layers(6), n_head=pick(6, 4), n_positions=256,
                   bos_token_id=1, eos_token_id=2,
                   vocab_size=pick(8192, 512))
model = Logits(hf_model(GPT2LMHeadModel, config)).eval().requires_grad_(False)
SEQS = (32, 48, 64)


def make_inputs(step: int):
    g = torch.Generator().manual_seed(step)
    return (torch.randint(0, config.vocab_size, (2, SEQS[step % len(SEQS)]), generator=g),)


def example_inputs():
    return make_inputs(0)


corpus_steps = 3
corpus_facts = facts(model, layers=config.n_layer, hidden=config.n_embd, dtype="fp32", batch=2,
                     seqs=list(SEQS))
