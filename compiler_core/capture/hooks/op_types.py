"""Is an FX node's target an ATen/prims operator? (`torch._ops.OpOverload[Packet]`.)

Those types are the only reliable test and have no public alias; read only.
"""

from __future__ import annotations

from typing import Any

TORCH_VERSIONS = ("2.11", "2.15")


def is_operator(target: Any) -> bool:
    """True for `torch.ops.aten.add.Tensor` (an overload) and `torch.ops.aten.add` (a packet)."""
    import torch._ops

    return isinstance(target, torch._ops.OpOverload | torch._ops.OpOverloadPacket)
