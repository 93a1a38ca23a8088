"""torchvision ConvNeXt-T (stages 3-3-9-3), inference at batch 8 in channels-last fp16
(random weights): 7x7 depthwise convs, LayerNorm over channels, inverted bottleneck MLPs."""

import sys
from pathlib import Path

import torch
import torchvision

sys.path.insert(0, str(Path(__file__).parent))
from _common import TINY, facts, pick

torch.manual_seed(0)
if TINY:
    from torchvision.models.convnext import CNBlockConfig, ConvNeXt

    model = ConvNeXt([CNBlockConfig(16, 32, 1), CNBlockConfig(32, None, 1)], num_classes=10)
else:
    model = torchvision.models.convnext_tiny(num_classes=1000)
model = model.eval().requires_grad_(False).to(torch.float16).to(memory_format=torch.channels_last)
SIZE = pick(224, 32)
example_inputs = (torch.randn(pick(8, 2), 3, SIZE, SIZE, dtype=torch.float16)
                  .to(memory_format=torch.channels_last),)
corpus_facts = facts(model, layers="3-3-9-3" if not TINY else "1-1", dtype="fp16 channels_last",
                     batch=example_inputs[0].shape[0], image=SIZE)
