"""Whether this environment can capture (compile models), decided without importing torch.

torch is an optional extra (`compilescope[capture]`): a user who only opens `TORCH_TRACE` logs
and saved sessions from a cluster on a laptop needs no multi-GB torch install. Capture entry
points (CLI and GUI) ask here first, so the user gets one clear sentence instead of a worker
that dies at `import torch`.
"""

from __future__ import annotations

import importlib.util

MIN_TORCH = (2, 11)

INSTALL_HINT = (
    "pip install 'compilescope[capture]'  (CPU build: add --index-url https://download.pytorch.org/whl/cpu; "
    "GPU: the CUDA build from https://pytorch.org)"
)


def capture_unavailable() -> str | None:
    """None when torch ≥ 2.11 is importable here, else the message to show the user."""
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):  # blocked or half-installed: as good as absent
        spec = None
    if spec is None or not spec.origin:
        return (
            "Capturing a model needs PyTorch ≥ 2.11, which is not installed in this environment. "
            f"Opening TORCH_TRACE logs and saved sessions works without it. To capture: {INSTALL_HINT}"
        )
    version = _installed_version()
    if version is not None and version < MIN_TORCH:
        found = ".".join(map(str, version))
        return f"Capturing needs PyTorch ≥ 2.11; this environment has {found}. To upgrade: {INSTALL_HINT}"
    return None


def _installed_version() -> tuple[int, int] | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        parts = version("torch").split("+")[0].split(".")
        return int(parts[0]), int(parts[1])
    except (PackageNotFoundError, ValueError, IndexError):
        return None
