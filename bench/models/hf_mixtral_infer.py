"""HF transformers MixtralForCausalLM, 16 layers of 8 experts (top-2 routing), batch-1 inference
in bf16 (random weights): a mixture-of-experts decoder."""

import sys
from pathlib import Path

import torch
from transformers import MixtralConfig, MixtralForCausalLM

sys.path.insert(0, str(Path(__file__).parent))
from _hf import layers

torch.manual_seed(0)
config = MixtralConfig(hidden_size=512, intermediate_size=1024, num_hidden_layers=layers(16),
                       num_attention_heads=8, num_key_value_heads=4, num_local_experts=8,
                       num_experts_per_tok=2, vocab_size=8192, max_position_embeddings=512,
                       attn_implementation="sdpa")


class Logits(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lm = MixtralForCausalLM(config)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.lm(input_ids=ids, use_cache=False).logits


model = Logits().to(torch.bfloat16).eval().requires_grad_(False)
example_inputs = (torch.randint(0, config.vocab_size, (1, 32)),)
