"""A diffusion-style U-Net, one noise-prediction training step on 32x32 4-channel latents at batch 8.

diffusers' UNet2DModel (a small config: 3 levels, attention in the lower two) when diffusers is
installed; otherwise a HAND-WRITTEN U-Net of the same shape (`corpus_facts["implementation"]` says
which): sinusoidal timestep embedding + MLP, ResBlocks (GroupNorm, SiLU, conv, timestep shift),
strided-conv downsampling, a self-attention mid block, nearest upsampling, and skip connections
concatenated on the way up."""

import math
import sys
from pathlib import Path

import torch
from torch import nn
from torch.nn import functional as F  # noqa: N812 (the PyTorch idiom)

sys.path.insert(0, str(Path(__file__).parent))
from _common import TINY, facts, pick

torch.manual_seed(0)
CHANNELS = (32, 64) if TINY else (128, 256, 256)
BLOCKS = 1 if TINY else 2


def timestep_embedding(t: torch.Tensor, dim: int) -> torch.Tensor:
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, device=t.device, dtype=torch.float32) / half)
    args = t.float()[:, None] * freqs[None]
    return torch.cat([args.cos(), args.sin()], dim=-1)


class ResBlock(nn.Module):
    def __init__(self, cin: int, cout: int, tdim: int) -> None:
        super().__init__()
        self.norm1 = nn.GroupNorm(8, cin)
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.temb = nn.Linear(tdim, cout)
        self.norm2 = nn.GroupNorm(8, cout)
        self.drop = nn.Dropout(0.1)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x: torch.Tensor, temb: torch.Tensor) -> torch.Tensor:
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.temb(F.silu(temb))[:, :, None, None]
        h = self.conv2(self.drop(F.silu(self.norm2(h))))
        return h + self.skip(x)


class Attention(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.norm = nn.GroupNorm(8, c)
        self.qkv = nn.Conv2d(c, 3 * c, 1)
        self.out = nn.Conv2d(c, c, 1)
        self.heads = max(1, c // 64)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, c, h, w = x.shape
        q, k, v = self.qkv(self.norm(x)).reshape(b, 3, self.heads, c // self.heads, h * w).unbind(1)
        o = F.scaled_dot_product_attention(q.transpose(-1, -2), k.transpose(-1, -2), v.transpose(-1, -2))
        return x + self.out(o.transpose(-1, -2).reshape(b, c, h, w))


class UNet(nn.Module):
    def __init__(self, cin: int = 4, channels=CHANNELS, blocks: int = BLOCKS) -> None:
        super().__init__()
        tdim = channels[0] * 4
        self.tdim = channels[0]
        self.time = nn.Sequential(nn.Linear(channels[0], tdim), nn.SiLU(), nn.Linear(tdim, tdim))
        self.stem = nn.Conv2d(cin, channels[0], 3, padding=1)
        self.down = nn.ModuleList()
        self.downsample = nn.ModuleList()
        skips = [channels[0]]
        c = channels[0]
        for i, co in enumerate(channels):
            level = nn.ModuleList()
            for _ in range(blocks):
                level.append(ResBlock(c, co, tdim))
                c = co
                skips.append(c)
            self.down.append(level)
            last = i == len(channels) - 1
            self.downsample.append(nn.Identity() if last else nn.Conv2d(c, c, 3, stride=2, padding=1))
            if not last:
                skips.append(c)
        self.mid1 = ResBlock(c, c, tdim)
        self.mid_attn = Attention(c)
        self.mid2 = ResBlock(c, c, tdim)
        self.up = nn.ModuleList()
        self.upsample = nn.ModuleList()
        for i, co in reversed(list(enumerate(channels))):
            level = nn.ModuleList()
            for _ in range(blocks + 1):
                level.append(ResBlock(c + skips.pop(), co, tdim))
                c = co
            self.up.append(level)
            self.upsample.append(nn.Conv2d(c, c, 3, padding=1) if i else nn.Identity())
        self.out = nn.Sequential(nn.GroupNorm(8, c), nn.SiLU(), nn.Conv2d(c, cin, 3, padding=1))

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        temb = self.time(timestep_embedding(t, self.tdim))
        h = self.stem(x)
        hs = [h]
        for level, down in zip(self.down, self.downsample, strict=True):
            for block in level:
                h = block(h, temb)
                hs.append(h)
            if not isinstance(down, nn.Identity):
                h = down(h)
                hs.append(h)
        h = self.mid2(self.mid_attn(self.mid1(h, temb)), temb)
        for level, up in zip(self.up, self.upsample, strict=True):
            for block in level:
                h = block(torch.cat([h, hs.pop()], dim=1), temb)
            if not isinstance(up, nn.Identity):
                h = up(F.interpolate(h, scale_factor=2.0, mode="nearest"))
        return self.out(h)


def _diffusers_unet():
    from diffusers import UNet2DModel

    net = UNet2DModel(sample_size=32, in_channels=4, out_channels=4, layers_per_block=BLOCKS,
                      block_out_channels=CHANNELS,
                      down_block_types=("DownBlock2D",) + ("AttnDownBlock2D",) * (len(CHANNELS) - 1),
                      up_block_types=("AttnUpBlock2D",) * (len(CHANNELS) - 1) + ("UpBlock2D",),
                      norm_num_groups=8)

    class Wrapped(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net = net

        def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
            return self.net(x, t).sample

    return Wrapped()


try:
    model = _diffusers_unet()
    IMPLEMENTATION = "diffusers UNet2DModel"
except Exception:  # diffusers not installed (or its API moved): the hand-written U-Net
    model = UNet()
    IMPLEMENTATION = "hand-written U-Net (no diffusers)"
model.train()
SIZE = pick(32, 16)
example_inputs = (torch.randn(pick(8, 2), 4, SIZE, SIZE), torch.randint(0, 1000, (pick(8, 2),)))


def train_step(model, inputs):
    x0, t = inputs
    noise = torch.randn_like(x0)
    alpha = (1 - t.float() / 1000).view(-1, 1, 1, 1)
    noisy = alpha.sqrt() * x0 + (1 - alpha).sqrt() * noise
    loss = F.mse_loss(model(noisy, t), noise)
    loss.backward()
    return loss


corpus_facts = facts(model, implementation=IMPLEMENTATION, channels=list(CHANNELS), blocks_per_level=BLOCKS,
                     dtype="fp32", batch=example_inputs[0].shape[0], latent=SIZE)
