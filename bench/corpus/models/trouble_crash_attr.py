"""TROUBLE (e), a crash in user code during compile: a hand-written 6-block transformer whose blocks
from index 2 on were meant to use layer scale, but `__init__` only creates `self.layer_scale` when
`init_values` is given (it is not): the forward of the 3rd block raises
`AttributeError: 'Block' object has no attribute 'layer_scale'` while Dynamo traces it, and the
run exits with that error."""

import torch
from torch import nn
from torch.nn import functional as F  # noqa: N812 (the PyTorch idiom)

torch.manual_seed(0)
DIM, HEADS, DEPTH = 256, 4, 6


class Block(nn.Module):
    def __init__(self, index: int, init_values: float | None = None) -> None:
        super().__init__()
        self.index = index
        self.norm1 = nn.LayerNorm(DIM)
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.proj = nn.Linear(DIM, DIM)
        self.norm2 = nn.LayerNorm(DIM)
        self.mlp = nn.Sequential(nn.Linear(DIM, 4 * DIM), nn.GELU(), nn.Linear(4 * DIM, DIM))
        self.use_layer_scale = index >= 2
        if init_values is not None:  # bug: the caller never passes it
            self.layer_scale = nn.Parameter(init_values * torch.ones(DIM))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, HEADS, DIM // HEADS).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, DIM)
        a = self.proj(a)
        if self.use_layer_scale:
            a = a * self.layer_scale  # AttributeError on block 2
        x = x + a
        return x + self.mlp(self.norm2(x))


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(1000, DIM)
        self.blocks = nn.ModuleList(Block(i) for i in range(DEPTH))
        self.head = nn.Linear(DIM, 1000)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.embed(ids)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


model = Net()
example_inputs = (torch.randint(0, 1000, (2, 64)),)


def train_step(model, inputs):
    loss = model(*inputs).logsumexp(-1).mean()
    loss.backward()
    return loss


corpus_steps = 1
corpus_facts = {"layers": DEPTH, "hidden": DIM, "dtype": "fp32", "batch": 2, "seq": 64,
                "params": sum(p.numel() for p in model.parameters())}
