"""timm DeiT-Small (deit_small_patch16_224: 12 blocks, width 384), one training step at batch 8
(random weights, `pretrained=False`: nothing downloaded): timm's fused-attention ViT blocks."""

import sys
from pathlib import Path

import timm
import torch

sys.path.insert(0, str(Path(__file__).parent))
from _common import TINY, facts, image_train_step, pick

torch.manual_seed(0)
if TINY:
    from timm.models.vision_transformer import VisionTransformer

    model = VisionTransformer(img_size=32, patch_size=8, embed_dim=64, depth=2, num_heads=2, num_classes=10)
else:
    model = timm.create_model("deit_small_patch16_224", pretrained=False, num_classes=100)
SIZE = pick(224, 32)
example_inputs = (torch.randn(pick(8, 2), 3, SIZE, SIZE),)
train_step = image_train_step
corpus_facts = facts(model, layers=len(model.blocks), hidden=model.embed_dim, dtype="fp32",
                     batch=example_inputs[0].shape[0], image=SIZE, timm=timm.__version__)
