"""A pre-norm transformer block with a training step.

What to look for: AOTAutograd's joint graph split into forward and backward, the saved tensors
that cross the split (attention probabilities, layer-norm statistics, GELU inputs), and Inductor
fusing softmax / layer_norm / gelu decompositions into a few kernels around the matmuls.
"""

import torch
from torch import nn
from torch.nn import functional as F


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).unbind(2)
        q, k, v = (z.transpose(1, 2) for z in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) / (d // self.heads) ** 0.5
        probs = torch.softmax(scores, dim=-1)
        out = (probs @ v).transpose(1, 2).reshape(b, t, d)
        return self.proj(out)


class Block(nn.Module):
    def __init__(self, dim: int = 64, heads: int = 4) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, heads)
        self.ln2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        h = F.gelu(self.fc1(self.ln2(x)))
        return x + self.fc2(h)


model = Block()
example_inputs = (torch.randn(4, 16, 64),)


def train_step(model: nn.Module, inputs: tuple[torch.Tensor, ...]) -> torch.Tensor:
    loss = model(*inputs).pow(2).mean()
    loss.backward()
    return loss
