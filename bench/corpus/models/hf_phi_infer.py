"""HF transformers PhiForCausalLM (the Phi-2 architecture), 12 layers, batch-2 inference in fp16
(random weights): parallel attention/MLP blocks, partial rotary embeddings, biased projections."""

import sys
from pathlib import Path

import torch
from transformers import PhiConfig, PhiForCausalLM

sys.path.insert(0, str(Path(__file__).parent))
from _common import Logits, facts, hf_config, hf_model, layers, pick

config = hf_config(PhiConfig, hidden_size=pick(512, 64), intermediate_size=pick(2048, 128),
                   num_hidden_layers=layers(12), num_attention_heads=pick(8, 4), vocab_size=pick(8192, 512),
                   max_position_embeddings=512, partial_rotary_factor=0.5)
model = Logits(hf_model(PhiForCausalLM, config)).to(torch.float16).eval().requires_grad_(False)
example_inputs = (torch.randint(0, config.vocab_size, (2, 64)),)
corpus_facts = facts(model, layers=config.num_hidden_layers, hidden=config.hidden_size, dtype="fp16",
                     batch=2, seq=64)
