"""HF transformers Qwen2ForCausalLM, 12 layers, batch-1 inference in bf16 (random weights):
a decoder with grouped-query attention and biased q/k/v projections; next-token logits only."""

import sys
from pathlib import Path

import torch
from transformers import Qwen2Config, Qwen2ForCausalLM

sys.path.insert(0, str(Path(__file__).parent))
from _common import Logits, facts, hf_config, hf_model, layers, pick

config = hf_config(Qwen2Config, hidden_size=pick(512, 64), intermediate_size=pick(1408, 128),
                   num_hidden_layers=layers(12), num_attention_heads=pick(8, 4), num_key_value_heads=2,
                   vocab_size=pick(8192, 512), max_position_embeddings=512)
model = Logits(hf_model(Qwen2ForCausalLM, config)).to(torch.bfloat16).eval().requires_grad_(False)
example_inputs = (torch.randint(0, config.vocab_size, (1, 32)),)
corpus_facts = facts(model, layers=config.num_hidden_layers, hidden=config.hidden_size, dtype="bf16",
                     batch=1, seq=32)
