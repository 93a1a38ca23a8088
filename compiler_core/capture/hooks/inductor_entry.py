"""Inductor's entry points for backends that wrap it, and its mode presets. Read only.

`compile_fx(gm, inputs, inner_compile=...)` is how a custom backend runs Inductor with its own
per-graph step (the memory-budget sweep records each partitioned graph there);
`list_mode_options(mode)` is the Inductor options a `torch.compile` mode stands for (needed to
merge a mode with explicit `options=`, which torch.compile refuses together).
"""

from __future__ import annotations

from typing import Any

TORCH_VERSIONS = ("2.11", "2.15")


def compile_fx_functions() -> tuple[Any, Any]:
    """(`compile_fx`, `compile_fx_inner`) of `torch._inductor.compile_fx`."""
    from torch._inductor.compile_fx import compile_fx, compile_fx_inner

    return compile_fx, compile_fx_inner


def list_mode_options(mode: str) -> dict[str, Any]:
    """Inductor options that `torch.compile(mode=mode)` implies."""
    import torch._inductor

    return dict(torch._inductor.list_mode_options(mode))
