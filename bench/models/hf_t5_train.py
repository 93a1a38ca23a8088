"""HF transformers T5ForConditionalGeneration, 6 encoder + 6 decoder layers, one training step
(random weights): an encoder-decoder with relative position buckets and cross-attention."""

import sys
from pathlib import Path

import torch
from transformers import T5Config, T5ForConditionalGeneration

sys.path.insert(0, str(Path(__file__).parent))
from _hf import layers

torch.manual_seed(0)
config = T5Config(d_model=512, d_ff=2048, d_kv=64, num_heads=8, num_layers=layers(6),
                  num_decoder_layers=layers(6), vocab_size=8192, decoder_start_token_id=0)
model = T5ForConditionalGeneration(config)
example_inputs = (torch.randint(0, config.vocab_size, (8, 128)), torch.randint(0, config.vocab_size, (8, 32)))


def train_step(model, inputs):
    src, tgt = inputs
    loss = model(input_ids=src, labels=tgt).loss
    loss.backward()
    return loss
