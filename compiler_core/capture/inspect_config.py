"""Torch config for an "inspect" capture: every stage must really run and say what it did.

Measured on torch 2.13 CPU:

- Cache hits skip the hooks. Both caches stay on anyway: on an FX graph cache hit the recording
  backend replays its stored post-grad records (post_grad_store.py), on an AOTAutograd hit the
  AOT-level records (aot_replay.py). Only where backward cannot be lowered eagerly (older torch)
  is the AOTAutograd cache turned off, since its records would arrive too late to store.
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
    functorch: dict[str, Any] = {"force_non_lazy_backward_lowering": True}
    if not _has(functorch_config, "force_non_lazy_backward_lowering"):
        functorch = {"enable_autograd_cache": False}  # lazy backward: records can't be replayed
    inductor = {k: v for k, v in wanted_inductor.items() if _has(inductor_config, k)}
    functorch = {k: v for k, v in functorch.items() if _has(functorch_config, k)}
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
