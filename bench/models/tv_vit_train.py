"""torchvision ViT-B/16 (12 encoder layers), one bf16 training step at batch 32 (random weights):
a vision transformer whose layers are named `encoder_layer_0..11`."""

import torch
import torchvision

torch.manual_seed(0)
model = torchvision.models.vit_b_16(num_classes=100).to(torch.bfloat16)
example_inputs = (torch.randn(32, 3, 224, 224, dtype=torch.bfloat16),)


def train_step(model, inputs):
    loss = model(*inputs).float().logsumexp(-1).mean()
    loss.backward()
    return loss
