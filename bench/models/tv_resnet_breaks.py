"""torchvision ResNet-50 training step, wrapped the way real training code often is: a data-dependent
`.item()` branch and a `print` of the loss scale, i.e. two different graph breaks."""

import torch
import torchvision
from torch import nn

torch.manual_seed(0)


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = torchvision.models.resnet50(num_classes=100)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        logits = self.net(x)
        if logits.abs().max().item() > 1e4:  # data-dependent: graph break on .item()
            logits = logits.clamp(-1e4, 1e4)
        print("logits mean", float(logits.mean()))  # print: graph break
        return logits.log_softmax(-1)


model = Classifier()
example_inputs = (torch.randn(8, 3, 128, 128),)


def train_step(model, inputs):
    loss = -model(*inputs)[:, 0].mean()
    loss.backward()
    return loss
