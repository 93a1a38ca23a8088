"""HF transformers GPT2LMHeadModel, 24 layers, one training step (random weights)."""

import sys
from pathlib import Path

import torch
from transformers import GPT2Config, GPT2LMHeadModel

sys.path.insert(0, str(Path(__file__).parent))
from _hf import layers, lm_train_step

torch.manual_seed(0)
config = GPT2Config(n_embd=512, n_layer=layers(24), n_head=8, vocab_size=8192, n_positions=512)
model = GPT2LMHeadModel(config)
ids = torch.randint(0, config.vocab_size, (4, 128))
example_inputs = (ids,)

train_step = lm_train_step
