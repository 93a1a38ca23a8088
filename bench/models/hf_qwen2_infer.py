"""HF transformers Qwen2ForCausalLM, 24 layers, batch-1 inference forward in bf16 (launch-bound
on a GPU): a decoder with grouped-query attention and biased q/k/v projections."""

import sys
from pathlib import Path

import torch
from transformers import Qwen2Config, Qwen2ForCausalLM

sys.path.insert(0, str(Path(__file__).parent))
from _hf import layers

torch.manual_seed(0)
config = Qwen2Config(hidden_size=896, intermediate_size=4864, num_hidden_layers=layers(24),
                     num_attention_heads=14, num_key_value_heads=2, vocab_size=32000,
                     max_position_embeddings=512, attn_implementation="sdpa")


class Logits(torch.nn.Module):
    """Next-token logits only, as a serving loop takes them."""

    def __init__(self) -> None:
        super().__init__()
        self.lm = Qwen2ForCausalLM(config)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.lm(input_ids=ids, use_cache=False).logits


model = Logits().to(torch.bfloat16).eval().requires_grad_(False)
example_inputs = (torch.randint(0, config.vocab_size, (1, 32)),)
