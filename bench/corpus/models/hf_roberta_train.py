"""HF transformers RobertaForMaskedLM, 12 layers, one training step (random weights): a
post-LayerNorm encoder with learned positions offset by the padding index."""

import sys
from pathlib import Path

import torch
from transformers import RobertaConfig, RobertaForMaskedLM

sys.path.insert(0, str(Path(__file__).parent))
from _common import facts, hf_config, hf_model, layers, mlm_train_step, pick

config = hf_config(RobertaConfig, hidden_size=pick(384, 64), intermediate_size=pick(1536, 128),
                   num_hidden_layers=layers(12), num_attention_heads=pick(6, 4), vocab_size=pick(8192, 512),
                   max_position_embeddings=514)
model = hf_model(RobertaForMaskedLM, config).train()
example_inputs = (torch.randint(3, config.vocab_size, (pick(8, 2), pick(128, 32))),)
train_step = mlm_train_step
corpus_facts = facts(model, layers=config.num_hidden_layers, hidden=config.hidden_size, dtype="fp32",
                     batch=example_inputs[0].shape[0], seq=example_inputs[0].shape[1])
