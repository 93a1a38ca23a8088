"""HF Llama (4 layers) inference over growing sequence lengths: a real recompile on a shape change."""

import sys
from pathlib import Path

import torch
from transformers import LlamaConfig, LlamaForCausalLM

sys.path.insert(0, str(Path(__file__).parent))
from _hf import layers

torch.manual_seed(0)
config = LlamaConfig(hidden_size=256, intermediate_size=688, num_hidden_layers=layers(4),
                     num_attention_heads=4, num_key_value_heads=4, vocab_size=4096,
                     max_position_embeddings=512, attn_implementation="sdpa")
model = LlamaForCausalLM(config).eval()
example_inputs = (torch.randint(0, config.vocab_size, (1, 8)),)


def make_inputs(step):
    return (torch.randint(0, config.vocab_size, (1, 8 * (step + 1))),)
