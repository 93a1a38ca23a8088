"""TROUBLE (d), two runs in one log: HF transformers GPT2LMHeadModel (4 layers) training, compiled
and stepped twice, then `torch._dynamo.reset()` and compiled and stepped twice again in the same
process (what a notebook user re-running a cell produces); the second compile may hit Inductor's
FX-graph cache filled by the first."""

import sys
from pathlib import Path

import torch
from transformers import GPT2Config, GPT2LMHeadModel

sys.path.insert(0, str(Path(__file__).parent))
from _common import facts, hf_config, hf_model, layers, lm_train_step, pick

config = hf_config(GPT2Config, n_embd=pick(256, 64), n_layer=layers(4), n_head=4, n_positions=256,
                   bos_token_id=1, eos_token_id=2,
                   vocab_size=pick(8192, 512))
model = hf_model(GPT2LMHeadModel, config).train()
example_inputs = (torch.randint(0, config.vocab_size, (4, pick(64, 32))),)
train_step = lm_train_step
corpus_facts = facts(model, layers=config.n_layer, hidden=config.n_embd, dtype="fp32", batch=4,
                     seq=example_inputs[0].shape[1], scenario="compile+run, reset, compile+run")
