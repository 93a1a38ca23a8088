"""TROUBLE (a), graph breaks inside a library: HF transformers Qwen2ForCausalLM (6 layers) under a
compiled `generate()` call (greedy, 8 new tokens, KV cache): Dynamo traces into transformers'
generation loop, whose Python (stopping criteria, cache bookkeeping, logits processors) breaks the
graph inside library code, and each decode step's growing cache length may recompile."""

import sys
from pathlib import Path

import torch
from transformers import Qwen2Config, Qwen2ForCausalLM

sys.path.insert(0, str(Path(__file__).parent))
from _common import facts, hf_config, hf_model, layers, pick

config = hf_config(Qwen2Config, hidden_size=pick(256, 64), intermediate_size=pick(704, 128),
                   num_hidden_layers=layers(6), num_attention_heads=4, num_key_value_heads=2,
                   vocab_size=pick(4096, 512), max_position_embeddings=256, eos_token_id=None, pad_token_id=0)


class Generate(torch.nn.Module):
    """What a serving script compiles: the whole `generate()` call."""

    def __init__(self) -> None:
        super().__init__()
        self.lm = hf_model(Qwen2ForCausalLM, config)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.lm.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=8, do_sample=False,
                                min_new_tokens=8, pad_token_id=0)


model = Generate().eval().requires_grad_(False)
example_inputs = (torch.randint(1, config.vocab_size, (1, 16)),)
corpus_steps = 1
corpus_facts = facts(model, layers=config.num_hidden_layers, hidden=config.hidden_size, dtype="fp32", batch=1,
                     prompt=16, new_tokens=8)
