"""torchvision Swin-T (depths 2-2-6-2, shifted windows of 7), one training step at batch 8
(random weights): window attention with relative position bias, patch merging."""

import sys
from pathlib import Path

import torch
import torchvision

sys.path.insert(0, str(Path(__file__).parent))
from _common import TINY, facts, image_train_step, pick

torch.manual_seed(0)
if TINY:
    from torchvision.models.swin_transformer import SwinTransformer

    model = SwinTransformer(patch_size=[4, 4], embed_dim=32, depths=[1, 1], num_heads=[2, 2],
                            window_size=[4, 4], num_classes=10)
else:
    model = torchvision.models.swin_t(num_classes=100)
SIZE = pick(224, 32)
example_inputs = (torch.randn(pick(8, 2), 3, SIZE, SIZE),)
train_step = image_train_step
corpus_facts = facts(model, layers="2-2-6-2" if not TINY else "1-1", dtype="fp32",
                     batch=example_inputs[0].shape[0], image=SIZE)
