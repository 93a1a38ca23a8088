"""HF transformers LlamaForCausalLM, 32 decoder layers, one bf16 training step (random weights).

Real third-party code: every op comes from transformers' modeling_llama.py. Hidden size is small so
the step is quick; the graph size (layers x ops) is what a 7B model's would be.
"""

import sys
from pathlib import Path

import torch
from transformers import LlamaConfig, LlamaForCausalLM

sys.path.insert(0, str(Path(__file__).parent))
from _hf import layers, lm_train_step

torch.manual_seed(0)
config = LlamaConfig(hidden_size=512, intermediate_size=1376, num_hidden_layers=layers(32),
                     num_attention_heads=8, num_key_value_heads=4, vocab_size=8192,
                     max_position_embeddings=512, attn_implementation="sdpa")
model = LlamaForCausalLM(config).to(torch.bfloat16)
ids = torch.randint(0, config.vocab_size, (4, 128))
example_inputs = (ids,)

train_step = lm_train_step
