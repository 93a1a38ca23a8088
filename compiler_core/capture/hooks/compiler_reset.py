"""Fresh compiler state before a compile: the public `torch.compiler.reset()`.

Not private at all (it calls `torch._dynamo.reset()`, which it documents), but it lives in the
seam so that no caller spells the private one: this is the one place that says how
CompileScope clears Dynamo's caches, guard failures and compile callbacks.
"""

from __future__ import annotations

TORCH_VERSIONS = ("2.11", "2.15")


def reset_compiler() -> None:
    """Clear Dynamo's in-process caches (not Inductor's disk cache); also drops compile callbacks."""
    import torch.compiler

    torch.compiler.reset()
