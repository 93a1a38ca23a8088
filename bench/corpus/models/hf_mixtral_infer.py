"""HF transformers MixtralForCausalLM, 12 layers of 8 experts (top-2 routing), batch-1 inference in
bf16 (random weights): a sparse mixture-of-experts decoder; the experts implementation is the
transformers release's default (recorded in corpus_facts)."""

import sys
from pathlib import Path

import torch
from transformers import MixtralConfig, MixtralForCausalLM

sys.path.insert(0, str(Path(__file__).parent))
from _common import Logits, facts, hf_config, hf_model, layers, pick

config = hf_config(MixtralConfig, hidden_size=pick(512, 64), intermediate_size=pick(1024, 128),
                   num_hidden_layers=layers(12), num_attention_heads=pick(8, 4),
                   num_key_value_heads=pick(4, 2),
                   num_local_experts=pick(8, 4), num_experts_per_tok=2, vocab_size=pick(8192, 512),
                   max_position_embeddings=512)
model = Logits(hf_model(MixtralForCausalLM, config)).to(torch.bfloat16).eval().requires_grad_(False)
example_inputs = (torch.randint(0, config.vocab_size, (1, 32)),)
corpus_facts = facts(model, layers=config.num_hidden_layers, hidden=config.hidden_size, dtype="bf16",
                     experts=config.num_local_experts, top_k=2, batch=1, seq=32)
