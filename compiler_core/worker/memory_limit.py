"""A cap on the worker's memory, so a model file that allocates without bound fails cleanly.

Without a cap, a runaway CPU allocation first makes the whole machine swap (freezing the GUI
with it) and then meets the kernel's OOM killer, which may pick the wrong process. With
RLIMIT_DATA set, the allocation itself fails inside the worker, torch raises, and the user sees
"out of memory" with their own traceback. RLIMIT_DATA (private writable memory, mmap included
since Linux 4.7) rather than RLIMIT_AS: it leaves shared libraries and address-space
reservations alone. CUDA captures get no default cap: the CUDA driver reserves large host
mappings, and device memory is bounded by the GPU itself (a CUDA OOM is an ordinary error).
"""

from __future__ import annotations

import os

DEFAULT_FRACTION = 0.75  # of physical memory, for CPU captures


def physical_memory_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def limit_bytes(device: str, max_memory_mb: int | None) -> int | None:
    """The cap to apply: explicit MiB (0 = none), else a default for CPU captures only."""
    if max_memory_mb is not None:
        return max_memory_mb * 2**20 if max_memory_mb > 0 else None
    if not device.startswith("cpu"):
        return None
    total = physical_memory_bytes()
    return int(total * DEFAULT_FRACTION) if total else None


def apply_memory_limit(device: str, max_memory_mb: int | None) -> int | None:
    """Set the cap for this process (children inherit it); returns it, or None if none applies."""
    cap = limit_bytes(device, max_memory_mb)
    if cap is None:
        return None
    try:
        import resource
    except ImportError:  # not on POSIX: no cap, nothing else changes
        return None
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (cap, hard))
    return cap
