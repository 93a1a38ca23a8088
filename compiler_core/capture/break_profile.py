"""One profiled step after a capture's compile run: the eager time each graph break costs.

torch.profiler is public API; the events it yields are turned into plain tuples and handed to
the torch-free `build.eager_gaps`, which reads Dynamo's `Torch-Compiled Region` events (present
since torch 2.1; checked on 2.11 and 2.13). Profiling is best effort: a failure leaves the
session without measured costs and says why, never fails the capture.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compiler_core.analysis.eager_gaps import eager_gaps
from compiler_core.session.model import EagerGap


def profile_eager_gaps(step: Callable[[], Any]) -> dict[str, EagerGap]:
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step()
    events = [(str(e.name), float(e.time_range.start), float(e.time_range.end), int(e.thread))
              for e in prof.events()]  # fmt: skip
    return eager_gaps(events)
