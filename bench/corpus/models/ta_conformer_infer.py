"""torchaudio Conformer (6 layers, 256 wide, depthwise conv kernel 31) over 80-dim features,
inference at batch 4 with per-utterance lengths (random weights); the padding mask is built from
`lengths` inside torchaudio."""

import sys
from pathlib import Path

import torch
import torchaudio

sys.path.insert(0, str(Path(__file__).parent))
from _common import facts, layers, pick

torch.manual_seed(0)
model = torchaudio.models.Conformer(input_dim=80, num_heads=4, ffn_dim=pick(1024, 64), num_layers=layers(6),
                                    depthwise_conv_kernel_size=31).eval().requires_grad_(False)
FRAMES = pick(200, 40)
example_inputs = (torch.randn(4, FRAMES, 80), torch.tensor([FRAMES, FRAMES - 10, FRAMES - 30, FRAMES // 2]))
corpus_facts = facts(model, layers=layers(6), hidden=80, dtype="fp32", batch=4, frames=FRAMES,
                     torchaudio=torchaudio.__version__)
