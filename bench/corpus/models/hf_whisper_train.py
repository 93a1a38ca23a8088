"""HF transformers WhisperForConditionalGeneration, a whisper-tiny-shaped config (4 + 4 layers,
d_model 384), one training step on 5 s of log-mel features (random weights): conv front end,
encoder, decoder with cross-attention."""

import sys
from pathlib import Path

import torch
from transformers import WhisperConfig, WhisperForConditionalGeneration

sys.path.insert(0, str(Path(__file__).parent))
from _common import facts, hf_config, hf_model, layers, pick

FRAMES = pick(500, 100)  # 10 ms hops: 5 s (the conv halves it to max_source_positions)
config = hf_config(WhisperConfig, d_model=pick(384, 64), encoder_layers=layers(4), decoder_layers=layers(4),
                   encoder_attention_heads=pick(6, 4), decoder_attention_heads=pick(6, 4),
                   encoder_ffn_dim=pick(1536, 128), decoder_ffn_dim=pick(1536, 128), num_mel_bins=80,
                   max_source_positions=FRAMES // 2, max_target_positions=128, vocab_size=pick(8192, 512),
                   decoder_start_token_id=1, pad_token_id=0, eos_token_id=2, bos_token_id=1)


class Speech2Text(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = hf_model(WhisperForConditionalGeneration, config)

    def forward(self, input_features: torch.Tensor, labels: torch.Tensor):
        return self.net(input_features=input_features, labels=labels)


def train_step(model, inputs):
    loss = model(*inputs).loss
    loss.backward()
    return loss


model = Speech2Text().train()
example_inputs = (torch.randn(pick(4, 2), 80, FRAMES), torch.randint(3, config.vocab_size, (pick(4, 2), 24)))
corpus_facts = facts(model, layers=f"{config.encoder_layers}+{config.decoder_layers}", hidden=config.d_model,
                     dtype="fp32", batch=example_inputs[0].shape[0], frames=FRAMES)
