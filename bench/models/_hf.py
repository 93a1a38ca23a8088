"""Shared sizing for the real-model bench files: layer count from $CS_LAYERS (CPU tests use 2)."""

import os

LAYERS = int(os.environ.get("CS_LAYERS", "0") or 0)


def layers(default: int) -> int:
    return LAYERS or default
