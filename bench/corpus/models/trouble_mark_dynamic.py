"""TROUBLE (c), dynamic shapes by marking: HF transformers BertForMaskedLM (6 layers) training with
the sequence dimension of the input ids marked dynamic before each call
(`torch._dynamo.mark_dynamic(ids, 1)`, done by the corpus runner from `dynamic_dims` after the
move to the device), at sequence lengths 64, 80 and 100: one graph, no recompile. (A CompileScope
capture of this file ignores `dynamic_dims`, so there it recompiles as automatic dynamic does.)"""

import sys
from pathlib import Path

import torch
from transformers import BertConfig, BertForMaskedLM

sys.path.insert(0, str(Path(__file__).parent))
from _common import facts, hf_config, hf_model, layers, mlm_train_step, pick

config = hf_config(BertConfig, hidden_size=pick(384, 64), intermediate_size=pick(1536, 128),
                   num_hidden_layers=layers(6), num_attention_heads=pick(6, 4), vocab_size=pick(8192, 512),
                   max_position_embeddings=512)
model = hf_model(BertForMaskedLM, config).train()
SEQS = (64, 80, 100)
dynamic_dims = {0: [1]}


def make_inputs(step: int):
    g = torch.Generator().manual_seed(step)
    return (torch.randint(0, config.vocab_size, (4, SEQS[step % len(SEQS)]), generator=g),)


def example_inputs():
    return make_inputs(0)


train_step = mlm_train_step
corpus_steps = 3
corpus_facts = facts(model, layers=config.num_hidden_layers, hidden=config.hidden_size, dtype="fp32", batch=4,
                     seqs=list(SEQS), dynamic_dims=dynamic_dims)
