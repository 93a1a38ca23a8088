"""Read-only probes of process state that costs time per op or per Python frame.

A timing process must hold none of it (compiler_core/timeline/clean_process.py asks): a torch
function or dispatch mode intercepts every op in Python, a live profiler records every op,
saved-tensor hooks run on every saved activation, Dynamo's frame-evaluation callback sees every
Python frame, and a frame Dynamo already compiled means a compile ran here before. Each probe only
reads; none changes anything.
"""

from __future__ import annotations

TORCH_VERSIONS = ("2.11", "2.15")  # oldest, newest served (see the package docstring)


def function_modes() -> int:
    """TorchFunctionModes on the stack (`torch.device(...)` as a context, set_default_device)."""
    import torch

    return int(torch._C._len_torch_function_stack())


def dispatch_modes() -> int:
    import torch

    return int(torch._C._len_torch_dispatch_stack())


def profiler_enabled() -> bool:
    import torch

    return bool(torch.autograd.profiler._is_profiler_enabled)


def saved_tensor_hooks() -> bool:
    import torch

    return torch._C._autograd._top_saved_tensors_default_hooks(False) is not None


def eval_frame_callback() -> bool:
    """Dynamo's PEP 523 callback installed outside any compiled call."""
    from torch._C._dynamo import eval_frame

    return eval_frame.get_eval_frame_callback() is not None


def frames_compiled() -> int:
    """Frames Dynamo compiled in this process (0 before any compile; 0 if Dynamo never loaded)."""
    import sys

    utils = sys.modules.get("torch._dynamo.utils")
    if utils is None:
        return 0
    return int(utils.counters["frames"]["ok"])
