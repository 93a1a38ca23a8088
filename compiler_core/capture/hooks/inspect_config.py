"""Torch config for an "inspect" capture: every stage must really run and say what it did.

As of torch 2.13 (CPU):

- Cache hits skip the hooks. Both caches stay on anyway: on an FX graph cache hit the recording
  backend replays its stored post-grad records (post_grad_store.py), on an AOTAutograd hit the
  AOT-level records (aot_replay.py). On torch where that replay is not verified (or backward
  cannot be lowered eagerly, so its records would arrive too late to store) both caches are
  turned off instead: slower warm captures, same sessions.
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

TORCH_VERSIONS = ("2.11", "2.15")  # oldest, newest served (see the package docstring)


def _has(config: Any, dotted: str) -> bool:
    obj = config
    for part in dotted.split("."):
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


# Cache-hit replay relies on torch's cache artifacts (`aotautograd_cache_*`, the FX key in
# `fx_graph_cache_hit`) and their order; verified on 2.13 by tests/compiler_core/capture/
# test_warm_capture.py. Older torch gets the slower, always-correct path: caches off.
REPLAY_VERIFIED_FROM = (2, 13)


def replay_supported() -> bool:
    """False also when COMPILESCOPE_CACHE_REPLAY=0 (to rule the replay out when debugging)."""
    import os

    import torch
    from torch._functorch import config as functorch_config

    if os.environ.get("COMPILESCOPE_CACHE_REPLAY") == "0":
        return False
    try:
        version = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
    except ValueError:
        return False
    return version >= REPLAY_VERIFIED_FROM and _has(functorch_config, "force_non_lazy_backward_lowering")


def eager_backward_wanted() -> bool:
    """COMPILESCOPE_EAGER_BACKWARD=0 keeps torch's lazy backward (a switch for diagnosing)."""
    import os

    return os.environ.get("COMPILESCOPE_EAGER_BACKWARD") != "0"


def inspect_patches(replay: bool | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """(inductor patches, functorch patches) this torch understands. `replay`: keep the caches
    on and replay records on hits (default: where verified, see REPLAY_VERIFIED_FROM)."""
    from torch._functorch import config as functorch_config
    from torch._inductor import config as inductor_config

    replay = replay_supported() if replay is None else replay
    inductor: dict[str, Any] = {"trace.provenance_tracking_level": 1}
    functorch: dict[str, Any] = {"force_non_lazy_backward_lowering": eager_backward_wanted()}
    if not replay:
        inductor["fx_graph_cache"] = False
        functorch["enable_autograd_cache"] = False
    inductor = {k: v for k, v in inductor.items() if _has(inductor_config, k)}
    functorch = {k: v for k, v in functorch.items() if _has(functorch_config, k)}
    return inductor, functorch


@contextlib.contextmanager
def inspect_config(provenance_only: bool = False) -> Iterator[dict[str, Any]]:
    """Apply the inspect flags; yields what was set (recorded in the session's meta).

    `provenance_only`: a user's own script run gets kernel provenance (what maps C++ kernels to
    their nodes on CPU, where the output code has no Graph fragment), with the backward lowered
    beside the forward (a lazily lowered backward logs empty provenance), and nothing that changes
    whether it compiles (the caches stay as the script has them). The backward's compile then
    lands in the first forward instead of the first backward: the same first step."""
    from torch._functorch import config as functorch_config
    from torch._inductor import config as inductor_config

    inductor, functorch = inspect_patches()
    if provenance_only:
        inductor = {k: v for k, v in inductor.items() if k.startswith("trace.provenance")}
        functorch = {k: v for k, v in functorch.items() if k == "force_non_lazy_backward_lowering"}
    with inductor_config.patch(inductor), functorch_config.patch(functorch):
        yield {**{f"inductor.{k}": v for k, v in inductor.items()},
               **{f"functorch.{k}": v for k, v in functorch.items()}}
