"""torchaudio wav2vec2_base (conv feature extractor + 12 transformer layers, 768 wide) with a CTC
head, one training step on 1 s of 16 kHz audio at batch 2 (random weights). In training mode the
encoder's LayerDrop draws `torch.rand(1)` per layer: torchaudio's own code decides in Python."""

import sys
from pathlib import Path

import torch
import torchaudio

sys.path.insert(0, str(Path(__file__).parent))
from _common import TINY, facts, pick

torch.manual_seed(0)
if TINY:
    model = torchaudio.models.wav2vec2_model(
        extractor_mode="group_norm", extractor_conv_layer_config=[(32, 10, 5), (32, 3, 2), (32, 2, 2)],
        extractor_conv_bias=False, encoder_embed_dim=64, encoder_projection_dropout=0.1,
        encoder_pos_conv_kernel=16, encoder_pos_conv_groups=4, encoder_num_layers=2, encoder_num_heads=2,
        encoder_attention_dropout=0.1, encoder_ff_interm_features=128, encoder_ff_interm_dropout=0.0,
        encoder_dropout=0.1, encoder_layer_norm_first=False, encoder_layer_drop=0.1, aux_num_out=32)
else:
    model = torchaudio.models.wav2vec2_base(aux_num_out=32)
model.train()
SAMPLES = pick(16000, 4000)
example_inputs = (torch.randn(2, SAMPLES),)


def train_step(model, inputs):
    (wave,) = inputs
    logits, _ = model(wave)
    log_probs = logits.float().log_softmax(-1).transpose(0, 1)  # (T, B, C)
    t, b = log_probs.shape[:2]
    targets = (torch.arange(b * 8, device=wave.device).reshape(b, 8) % 31) + 1
    loss = torch.nn.functional.ctc_loss(log_probs, targets, torch.full((b,), t, device=wave.device),
                                        torch.full((b,), 8, device=wave.device))
    loss.backward()
    return loss


corpus_facts = facts(model, layers=len(model.encoder.transformer.layers), dtype="fp32", batch=2,
                     samples=SAMPLES,                      torchaudio=torchaudio.__version__)
