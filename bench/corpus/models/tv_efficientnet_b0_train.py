"""torchvision EfficientNet-B0 (16 MBConv blocks), one training step at batch 8 (random weights):
depthwise convs, squeeze-and-excitation, SiLU, BatchNorm in training mode, stochastic depth."""

import sys
from pathlib import Path

import torch
import torchvision

sys.path.insert(0, str(Path(__file__).parent))
from _common import facts, image_train_step, pick

torch.manual_seed(0)
model = torchvision.models.efficientnet_b0(num_classes=100)
SIZE = pick(224, 32)
example_inputs = (torch.randn(pick(8, 2), 3, SIZE, SIZE),)
train_step = image_train_step
corpus_facts = facts(model, layers="16 MBConv", dtype="fp32", batch=example_inputs[0].shape[0], image=SIZE)
