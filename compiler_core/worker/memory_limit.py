"""A cap on the worker's memory, so a model file that allocates without bound fails cleanly.

Without a cap, a runaway CPU allocation first makes the whole machine swap (freezing the GUI
with it) and then meets the kernel's OOM killer, which may pick the wrong process. With
RLIMIT_DATA set, the allocation itself fails inside the worker, torch raises, and the user sees
"out of memory" with their own traceback. RLIMIT_DATA (private writable memory, mmap included
since Linux 4.7) rather than RLIMIT_AS: it leaves shared libraries and address-space
reservations alone. CUDA captures get no default cap: the CUDA driver reserves large host
mappings, and device memory is bounded by the GPU itself (a CUDA OOM is an ordinary error).

What RLIMIT_DATA misses (as of Linux 6.18): `MAP_SHARED` mappings,
anonymous or of a file (a 600 MiB shared mmap succeeds under a 300 MiB RLIMIT_DATA). So on CPU
RLIMIT_AS is set to the same cap as well: it counts every mapping, shared ones included (the
same 600 MiB mmap fails under it), and torch.compile on CPU runs under a 2 GiB RLIMIT_AS.
It is not set for CUDA, whose driver reserves terabytes of address space.

Children: rlimits are per process, so N forked children could each use the cap. The parent
(launch.MemoryWatch, CLI and GUI alike) therefore sums the proportional resident memory (PSS) of
the worker's whole process tree every 0.5 s (process_sweep.tree_pss_bytes) and kills the run past
the cap.
Still not covered, and said so in the session (`meta.extra["memory_cap"]`) and by the CLI: the
tree's total between two checks (a burst can overshoot for up to 0.5 s), without RLIMIT_AS
(CUDA) shared mappings, and RAM-backed files written but never mapped (3 GiB written to a memfd
under a 1 GiB cap is page cache: no rlimit and no process's PSS counts it).
Only a cgroup v2 memory limit bounds a tree exactly; this module does
not create one (the machines we test on have no writable cgroup v2 hierarchy to test it on).
"""

from __future__ import annotations

import os

DEFAULT_FRACTION = 0.75  # of physical memory, for CPU captures


def physical_memory_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def memory_device(device: str) -> str:
    """The device whose memory rules apply. A script run's "auto" clock device may become CUDA
    only where an NVIDIA driver is loaded; elsewhere the run is a CPU run (its default cap and
    RLIMIT_AS apply). Checked without importing torch: the client calls this too."""
    if device != "auto":
        return device
    driver = os.path.exists("/proc/driver/nvidia/version") or os.path.exists("/dev/nvidiactl")
    return "cuda" if driver else "cpu"


def limit_bytes(device: str, max_memory_mb: int | None) -> int | None:
    """The cap to apply: explicit MiB (0 = none), else a default for CPU captures only."""
    device = memory_device(device)
    if max_memory_mb is not None:
        return max_memory_mb * 2**20 if max_memory_mb > 0 else None
    if not device.startswith("cpu"):
        return None
    total = physical_memory_bytes()
    return int(total * DEFAULT_FRACTION) if total else None


def apply_memory_limit(device: str, max_memory_mb: int | None) -> str:
    """Set the cap for this process (children inherit it); returns what it covers, in words."""
    device = memory_device(device)
    cap = limit_bytes(device, max_memory_mb)
    if cap is None:
        return "no memory cap"
    try:
        import resource
    except ImportError:  # not on POSIX: no cap, nothing else changes
        return "no memory cap (no resource limits on this platform)"
    limits = [resource.RLIMIT_DATA]
    if device.startswith("cpu"):
        limits.append(resource.RLIMIT_AS)
    for which in limits:
        _, hard = resource.getrlimit(which)
        resource.setrlimit(which, (cap if hard == resource.RLIM_INFINITY else min(cap, hard), hard))
    shared = "" if device.startswith("cpu") else "shared mappings (MAP_SHARED) and "
    return (f"{cap >> 20} MiB per process ({' and '.join(_names(limits))}), child processes summed "
            f"every 0.5 s; not covered: {shared}RAM-backed files the model writes without mapping them "
            f"(memfd, /dev/shm, tmpfs: page cache, in no process's memory), bursts of the process tree "
            f"between checks (no cgroup)")


def _names(limits: list[int]) -> list[str]:
    import resource

    return ["RLIMIT_AS" if which == resource.RLIMIT_AS else "RLIMIT_DATA" for which in limits]
