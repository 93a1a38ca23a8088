"""torchvision ViT-B/16 (12 encoder layers, 86M parameters), one training step at batch 8 under
bf16 autocast (random weights): patch embedding conv, class token, pre-LN encoder blocks."""

import sys
from pathlib import Path

import torch
import torchvision

sys.path.insert(0, str(Path(__file__).parent))
from _common import TINY, facts, image_train_step, pick

torch.manual_seed(0)
if TINY:
    from torchvision.models.vision_transformer import VisionTransformer

    model = VisionTransformer(image_size=32, patch_size=16, num_layers=2, num_heads=2, hidden_dim=64,
                              mlp_dim=128, num_classes=10)
else:
    model = torchvision.models.vit_b_16(num_classes=100)
SIZE = pick(224, 32)
example_inputs = (torch.randn(pick(8, 2), 3, SIZE, SIZE),)


def train_step(model, inputs):
    with torch.autocast(inputs[0].device.type, dtype=torch.bfloat16):
        return image_train_step(model, inputs)


corpus_facts = facts(model, layers=len(model.encoder.layers), hidden=model.hidden_dim,
                     dtype="fp32+bf16 autocast", batch=example_inputs[0].shape[0], image=SIZE)
