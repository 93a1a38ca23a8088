"""HF transformers LlamaForCausalLM, 32 layers, batch-1 inference forward (launch-bound on a GPU)."""

import sys
from pathlib import Path

import torch
from transformers import LlamaConfig, LlamaForCausalLM

sys.path.insert(0, str(Path(__file__).parent))
from _hf import layers

torch.manual_seed(0)
config = LlamaConfig(hidden_size=512, intermediate_size=1376, num_hidden_layers=layers(32),
                     num_attention_heads=8, num_key_value_heads=4, vocab_size=8192,
                     max_position_embeddings=512, attn_implementation="sdpa")


class Logits(torch.nn.Module):
    """Next-token logits only (no KV cache object in the output), as a serving loop takes them."""

    def __init__(self) -> None:
        super().__init__()
        self.lm = LlamaForCausalLM(config)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.lm(input_ids=ids, use_cache=False).logits


model = Logits().to(torch.bfloat16).eval().requires_grad_(False)
example_inputs = (torch.randint(0, config.vocab_size, (1, 32)),)
