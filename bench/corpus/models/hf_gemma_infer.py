"""HF transformers GemmaForCausalLM, 12 layers, batch-1 inference in bf16 (random weights):
multi-query attention, GeGLU MLP, RMSNorm with (1 + weight), embeddings scaled by sqrt(hidden)."""

import sys
from pathlib import Path

import torch
from transformers import GemmaConfig, GemmaForCausalLM

sys.path.insert(0, str(Path(__file__).parent))
from _common import Logits, facts, hf_config, hf_model, layers, pick

config = hf_config(GemmaConfig, hidden_size=pick(512, 64), intermediate_size=pick(2048, 128),
                   num_hidden_layers=layers(12), num_attention_heads=pick(8, 4), num_key_value_heads=1,
                   head_dim=pick(64, 16), vocab_size=pick(8192, 512), max_position_embeddings=512)
model = Logits(hf_model(GemmaForCausalLM, config)).to(torch.bfloat16).eval().requires_grad_(False)
example_inputs = (torch.randint(0, config.vocab_size, (1, 48)),)
corpus_facts = facts(model, layers=config.num_hidden_layers, hidden=config.hidden_size, dtype="bf16",
                     batch=1, seq=48)
