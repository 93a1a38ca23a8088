"""TROUBLE (a), graph breaks around a library model: torchvision ResNet-18 training step wrapped the
way real training code often is: a data-dependent `.item()` branch on the logits and a `print` of
their mean, i.e. two different graph breaks after the torchvision forward."""

import sys
from pathlib import Path

import torch
import torchvision
from torch import nn

sys.path.insert(0, str(Path(__file__).parent))
from _common import facts, image_train_step, pick

torch.manual_seed(0)


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = torchvision.models.resnet18(num_classes=100)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        logits = self.net(x)
        if logits.abs().max().item() > 1e4:  # data-dependent: graph break on .item()
            logits = logits.clamp(-1e4, 1e4)
        print("logits mean", float(logits.mean()))  # print (and float()): graph break
        return logits


model = Classifier().train()
SIZE = pick(160, 32)
example_inputs = (torch.randn(pick(8, 2), 3, SIZE, SIZE),)
train_step = image_train_step
corpus_facts = facts(model, layers="resnet18", dtype="fp32", batch=example_inputs[0].shape[0], image=SIZE)
