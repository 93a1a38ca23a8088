"""The capture's timeline against the user's own loop, each in a fresh process, on CUDA.

The user's path (`python -m compiler_core capture MODEL --device cuda --steps N`, then `summary`)
and a plain loop of the same file that imports nothing of ours (`bench/scripts/plain_loop.py`),
run one after the other. The bound is loose on purpose: a lent GPU host drifts by tens of per
cent between minutes, so this catches a timeline that is off by a factor (a capture's residue
slows every step that much), not one that is off by a few per cent; that target belongs to
`bench/timeline_truth.py`.

    python -m pytest tests/compiler_core/timeline/test_gpu_timeline_truth.py -q -m gpu -p no:cacheprovider \\
        -o addopts="" -W ignore::pytest.PytestConfigWarning
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from tests.bench_scripts import bench_module

pytestmark = [pytest.mark.gpu, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[3]
MODEL = ROOT / "resources" / "examples" / "transformer_block.py"
LOOSE = 1.6  # a factor, not a target


def _truth() -> ModuleType:
    return bench_module("timeline_truth")


def test_cli_capture_timeline_agrees_with_a_plain_loop_in_a_fresh_process() -> None:
    truth = _truth()
    app = truth.app_run(MODEL, "cuda", 60, "default")
    loop = truth.plain_run(MODEL, "cuda", 60, "default")
    assert "error" not in app, app.get("error")
    assert "error" not in loop, loop.get("error")
    pairs = [("eager median", app["eager_ms"], loop["eager_ms"]),
             ("default median", app["modes"]["default"]["median_ms"], loop["modes"]["default"]["median_ms"]),
             ("default speedup", app["modes"]["default"]["speedup"], loop["modes"]["default"]["speedup"])]
    for label, ours, theirs in pairs:
        assert ours is not None and ours > 0, label
        assert 1 / LOOSE <= ours / theirs <= LOOSE, f"{label}: app {ours:.3f} vs plain loop {theirs:.3f}"
