"""HF transformers GPTNeoXForCausalLM (the Pythia architecture), 12 layers, one training step
(random weights): parallel attention + MLP residual, partial rotary embeddings, fused QKV."""

import sys
from pathlib import Path

import torch
from transformers import GPTNeoXConfig, GPTNeoXForCausalLM

sys.path.insert(0, str(Path(__file__).parent))
from _common import facts, hf_config, hf_model, layers, lm_train_step, pick

config = hf_config(GPTNeoXConfig, hidden_size=pick(512, 64), intermediate_size=pick(2048, 128),
                   num_hidden_layers=layers(12), num_attention_heads=pick(8, 4), vocab_size=pick(8192, 512),
                   max_position_embeddings=512, rotary_pct=0.25, use_parallel_residual=True)
model = hf_model(GPTNeoXForCausalLM, config).train()
example_inputs = (torch.randint(0, config.vocab_size, (pick(4, 2), pick(128, 32))),)
train_step = lm_train_step
corpus_facts = facts(model, layers=config.num_hidden_layers, hidden=config.hidden_size, dtype="fp32",
                     batch=example_inputs[0].shape[0], seq=example_inputs[0].shape[1])
