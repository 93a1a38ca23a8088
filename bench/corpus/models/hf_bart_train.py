"""HF transformers BartForConditionalGeneration, 6 encoder + 6 decoder layers, one training step
(random weights): learned positions, post-LayerNorm, cross-attention, tied LM head."""

import sys
from pathlib import Path

import torch
from transformers import BartConfig, BartForConditionalGeneration

sys.path.insert(0, str(Path(__file__).parent))
from _common import facts, hf_config, hf_model, layers, pick, seq2seq_train_step

config = hf_config(BartConfig, d_model=pick(384, 64), encoder_ffn_dim=pick(1536, 128),
                   decoder_ffn_dim=pick(1536, 128), encoder_layers=layers(6), decoder_layers=layers(6),
                   encoder_attention_heads=pick(6, 4), decoder_attention_heads=pick(6, 4),
                   vocab_size=pick(8192, 512), max_position_embeddings=512)
model = hf_model(BartForConditionalGeneration, config).train()
example_inputs = (torch.randint(3, config.vocab_size, (pick(8, 2), pick(128, 32))),
                  torch.randint(3, config.vocab_size, (pick(8, 2), pick(48, 16))))
train_step = seq2seq_train_step
corpus_facts = facts(model, layers=f"{config.encoder_layers}+{config.decoder_layers}", hidden=config.d_model,
                     dtype="fp32", batch=example_inputs[0].shape[0], seq=example_inputs[0].shape[1])
