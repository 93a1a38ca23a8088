"""torchvision MobileNetV3-Large, inference at batch 8 (random weights): hard-swish, squeeze-and-
excitation, depthwise separable convs with BatchNorm folded at eval."""

import sys
from pathlib import Path

import torch
import torchvision

sys.path.insert(0, str(Path(__file__).parent))
from _common import facts, pick

torch.manual_seed(0)
model = torchvision.models.mobilenet_v3_large(num_classes=1000).eval().requires_grad_(False)
SIZE = pick(224, 32)
example_inputs = (torch.randn(pick(8, 2), 3, SIZE, SIZE),)
corpus_facts = facts(model, layers="15 inverted residual", dtype="fp32", batch=example_inputs[0].shape[0],
                     image=SIZE)
