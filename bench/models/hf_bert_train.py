"""HF transformers BertForMaskedLM, 24 encoder layers, one training step (random weights)."""

import sys
from pathlib import Path

import torch
from transformers import BertConfig, BertForMaskedLM

sys.path.insert(0, str(Path(__file__).parent))
from _hf import layers, lm_train_step

torch.manual_seed(0)
config = BertConfig(hidden_size=512, num_hidden_layers=layers(24), num_attention_heads=8,
                    intermediate_size=2048, vocab_size=8192, max_position_embeddings=512)
model = BertForMaskedLM(config)
ids = torch.randint(0, config.vocab_size, (4, 128))
example_inputs = (ids,)

train_step = lm_train_step
