"""Torch config for an "inspect" capture: every stage must really run and say what it did.

Measured on torch 2.13 CPU:

- An AOTAutograd cache hit skips tracing and partitioning, so the joint/forward/backward graphs
  and saved tensors would be missing: that cache is off. The FX graph cache stays on; on its
  hits the recording backend replays its stored post-grad records (post_grad_store.py).
- Backward compiles lazily (at the first `.backward()`), outside the compile, and its kernel
  provenance comes out empty: `force_non_lazy_backward_lowering` compiles it with the forward
  (absent in older torch, hence the guard).
- `trace.provenance_tracking_level = 1` makes Inductor log which post-grad nodes each kernel
  came from (`inductor_provenance_tracking_node_mappings`), the basis of kernel ↔ node links.

Each flag is set only if this torch has it, through `config.patch` context managers, so the
process's config is restored afterwards.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


def _has(config: Any, dotted: str) -> bool:
    obj = config
    for part in dotted.split("."):
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


def inspect_patches() -> tuple[dict[str, Any], dict[str, Any]]:
    """(inductor patches, functorch patches) this torch understands."""
    from torch._functorch import config as functorch_config
    from torch._inductor import config as inductor_config

    wanted_inductor = {"trace.provenance_tracking_level": 1}
    wanted_functorch = {"enable_autograd_cache": False, "force_non_lazy_backward_lowering": True}
    inductor = {k: v for k, v in wanted_inductor.items() if _has(inductor_config, k)}
    functorch = {k: v for k, v in wanted_functorch.items() if _has(functorch_config, k)}
    return inductor, functorch


@contextlib.contextmanager
def inspect_config() -> Iterator[dict[str, Any]]:
    """Apply the inspect flags; yields what was set (recorded in the session's meta)."""
    from torch._functorch import config as functorch_config
    from torch._inductor import config as inductor_config

    inductor, functorch = inspect_patches()
    with inductor_config.patch(inductor), functorch_config.patch(functorch):
        yield {**{f"inductor.{k}": v for k, v in inductor.items()},
               **{f"functorch.{k}": v for k, v in functorch.items()}}
