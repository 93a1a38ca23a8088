"""The one config patch the memory-budget sweep needs, as a context manager that restores.

`torch._functorch.config.activation_memory_budget` (0..1; 1.0 = the default min-cut partition,
lower = recompute more to save less) is read by the partitioner each time a training graph is
partitioned. Both AOTAutograd's cache and Inductor's FX graph cache are switched off inside the
block: a cache hit would skip the partition (and our `inner_compile` hook) altogether.

Serves torch 2.11 – 2.15 (the three names exist unchanged there); `config.patch` restores the
previous values on exit, also when the block raises.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

TORCH_VERSIONS = ("2.11", "2.15")  # oldest, newest served


@contextmanager
def activation_memory_budget(budget: float) -> Iterator[None]:
    if not 0.0 <= budget <= 1.0:
        raise ValueError(f"activation_memory_budget must be in [0, 1], got {budget}")
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config

    with ExitStack() as stack:
        stack.enter_context(functorch_config.patch(activation_memory_budget=budget,
                                                   enable_autograd_cache=False))  # fmt: skip
        stack.enter_context(inductor_config.patch(fx_graph_cache=False))
        yield
