"""HF transformers Qwen2MoeForCausalLM, 6 layers of 16 routed experts (top-4) plus a gated shared
expert, batch-2 inference in bf16 (random weights): a fine-grained mixture of experts, with
`experts_implementation="eager"`, transformers' classic loop over the experts that were hit
(`nonzero()` on the routing mask: a data-dependent shape, so Dynamo breaks the graph in every MoE
layer and compiles the expert calls separately). hf_mixtral_infer keeps the release's default
(grouped_mm where it can dispatch)."""

import sys
from pathlib import Path

import torch
from transformers import Qwen2MoeConfig, Qwen2MoeForCausalLM

sys.path.insert(0, str(Path(__file__).parent))
from _common import Logits, facts, hf_config, hf_model, layers, pick

config = hf_config(Qwen2MoeConfig, hidden_size=pick(512, 64), intermediate_size=pick(1408, 128),
                   moe_intermediate_size=pick(256, 32), shared_expert_intermediate_size=pick(1024, 64),
                   num_hidden_layers=layers(6), num_attention_heads=pick(8, 4),
                   num_key_value_heads=pick(4, 2),
                   num_experts=pick(16, 4), num_experts_per_tok=pick(4, 2), decoder_sparse_step=1,
                   vocab_size=pick(8192, 512), max_position_embeddings=512,
                   experts_implementation="eager")
model = Logits(hf_model(Qwen2MoeForCausalLM, config)).to(torch.bfloat16).eval().requires_grad_(False)
example_inputs = (torch.randint(0, config.vocab_size, (2, 32)),)
corpus_facts = facts(model, layers=config.num_hidden_layers, hidden=config.hidden_size, dtype="bf16",
                     experts=config.num_experts, top_k=config.num_experts_per_tok, batch=2, seq=32)
