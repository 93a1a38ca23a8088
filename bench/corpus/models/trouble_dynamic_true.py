"""TROUBLE (c), dynamic shapes from the start: HF transformers LlamaForCausalLM (6 layers) inference
compiled with `dynamic=True`, called at (batch, seq) = (2, 32), (4, 40), (1, 57): a graph with
symbolic batch and sequence sizes and shape guards; the batch-1 call still recompiles, because
Dynamo specializes sizes 0 and 1 even under dynamic=True (guard `2 <= ids.size()[0]`)."""

import sys
from pathlib import Path

import torch
from transformers import LlamaConfig, LlamaForCausalLM

sys.path.insert(0, str(Path(__file__).parent))
from _common import Logits, facts, hf_config, hf_model, layers, pick

config = hf_config(LlamaConfig, hidden_size=pick(384, 64), intermediate_size=pick(1024, 128),
                   num_hidden_layers=layers(6), num_attention_heads=pick(6, 4), num_key_value_heads=2,
                   vocab_size=pick(8192, 512), max_position_embeddings=256)
model = Logits(hf_model(LlamaForCausalLM, config)).eval().requires_grad_(False)
compile_options = {"dynamic": True}
SHAPES = ((2, 32), (4, 40), (1, 57))


def make_inputs(step: int):
    g = torch.Generator().manual_seed(step)
    return (torch.randint(0, config.vocab_size, SHAPES[step % len(SHAPES)], generator=g),)


def example_inputs():
    return make_inputs(0)


corpus_steps = 3
corpus_facts = facts(model, layers=config.num_hidden_layers, hidden=config.hidden_size, dtype="fp32",
                     shapes=[list(s) for s in SHAPES], compile_options=compile_options)
