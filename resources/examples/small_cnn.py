"""A small CNN: convolutions become extern calls, batch-norm and ReLU fuse around them.

What to look for: `convolution` entries listed as extern calls in the Inductor pane, and the
pointwise work between them (batch norm, ReLU, pooling) fused into generated kernels.
"""

import torch
from torch import nn

model = nn.Sequential(
    nn.Conv2d(3, 16, 3, padding=1),
    nn.BatchNorm2d(16),
    nn.ReLU(),
    nn.MaxPool2d(2),
    nn.Conv2d(16, 32, 3, padding=1),
    nn.ReLU(),
    nn.AdaptiveAvgPool2d(1),
    nn.Flatten(),
    nn.Linear(32, 10),
).eval()
example_inputs = (torch.randn(2, 3, 32, 32),)
