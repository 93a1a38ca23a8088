"""Peak memory measured beside the step times.

Peak memory is the CUDA caching allocator's high-water mark on GPU (host-side bookkeeping, so
reading it needs no sync) and the process's resident-set high-water mark (`VmHWM`) on Linux
CPU, reset per step through `/proc/self/clear_refs` where the kernel allows it. Kernel launches
per step come from the mode's profile (kernel_profile.py).
"""

from __future__ import annotations

import resource
import sys
from pathlib import Path

_STATUS = Path("/proc/self/status")
_CLEAR_REFS = Path("/proc/self/clear_refs")


class MemoryProbe:
    """Peak memory since the last `reset()`, in bytes (None when the platform can't tell)."""

    def __init__(self, device: str) -> None:
        self.cuda = device.startswith("cuda")
        self.device = device
        self._can_reset_rss = _CLEAR_REFS.exists()

    def reset(self) -> None:
        if self.cuda:
            import torch

            torch.cuda.reset_peak_memory_stats(self.device)
        elif self._can_reset_rss:
            try:
                _CLEAR_REFS.write_text("5")  # 5: reset the peak RSS to the current RSS
            except OSError:
                self._can_reset_rss = False

    def peak(self) -> int | None:
        if self.cuda:
            import torch

            return int(torch.cuda.max_memory_allocated(self.device))
        return _rss_high_water()


def _rss_high_water() -> int | None:
    try:
        for line in _STATUS.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    usage = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(usage) * (1 if sys.platform == "darwin" else 1024) if usage else None

