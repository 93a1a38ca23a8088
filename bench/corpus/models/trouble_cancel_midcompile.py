"""TROUBLE (f), a run cancelled mid-compile: HF transformers LlamaForCausalLM (12 layers) training,
whose process the corpus maker SIGKILLs as soon as the log shows Inductor at work (the first
post-grad graph) and before any compiled code ran: the log ends in the middle of a compile."""

import sys
from pathlib import Path

import torch
from transformers import LlamaConfig, LlamaForCausalLM

sys.path.insert(0, str(Path(__file__).parent))
from _common import facts, hf_config, hf_model, layers, lm_train_step, pick

config = hf_config(LlamaConfig, hidden_size=pick(512, 64), intermediate_size=pick(1408, 128),
                   num_hidden_layers=layers(12), num_attention_heads=pick(8, 4),
                   num_key_value_heads=pick(4, 2),
                   vocab_size=pick(8192, 512), max_position_embeddings=512)
model = hf_model(LlamaForCausalLM, config).train()
example_inputs = (torch.randint(0, config.vocab_size, (pick(4, 2), pick(128, 32))),)
train_step = lm_train_step
corpus_steps = 1
corpus_facts = facts(model, layers=config.num_hidden_layers, hidden=config.hidden_size, dtype="fp32",
                     batch=example_inputs[0].shape[0], seq=example_inputs[0].shape[1])
