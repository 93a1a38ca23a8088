"""HF transformers T5ForConditionalGeneration, 12 encoder + 12 decoder layers, one training step
(random weights): relative position buckets, cross-attention, RMS-style LayerNorm, no biases."""

import sys
from pathlib import Path

import torch
from transformers import T5Config, T5ForConditionalGeneration

sys.path.insert(0, str(Path(__file__).parent))
from _common import facts, hf_config, hf_model, layers, pick, seq2seq_train_step

config = hf_config(T5Config, d_model=pick(384, 64), d_ff=pick(1024, 128), d_kv=pick(64, 16),
                   num_heads=pick(6, 4), num_layers=layers(12), num_decoder_layers=layers(12),
                   vocab_size=pick(8192, 512), decoder_start_token_id=0, pad_token_id=0)
model = hf_model(T5ForConditionalGeneration, config).train()
example_inputs = (torch.randint(1, config.vocab_size, (pick(8, 2), pick(128, 32))),
                  torch.randint(1, config.vocab_size, (pick(8, 2), pick(32, 16))))
train_step = seq2seq_train_step
corpus_facts = facts(model, layers=f"{config.num_layers}+{config.num_decoder_layers}", hidden=config.d_model,
                     dtype="fp32", batch=example_inputs[0].shape[0], seq=example_inputs[0].shape[1])
