"""A model whose second training step calls `os._exit(3)` (after its compile finished): the
GUI's progress dialog (`CaptureOutcome.describe`) names the same stage as the CLI's verdict and
the session's error diagnostic, 'run', not the compile stage that happened to start last."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from compiler_core.worker.client import WorkerClient
from compiler_core.worker.protocol import CaptureSpec

pytestmark = pytest.mark.slow

EXITS = """
import os
import torch

model = torch.nn.Linear(8, 4)
example_inputs = (torch.randn(2, 8),)
_calls = 0

def train_step(model, inputs):
    global _calls
    _calls += 1
    model(*inputs).sum().backward()
    if _calls >= 2:
        os._exit(3)
"""


def test_exit_after_the_compile_is_reported_in_stage_run(
        model_file: Callable[[str, str], Path], capture_cache: Path) -> None:  # fmt: skip
    path = model_file("exits_later", EXITS)
    spec = CaptureSpec(model_path=str(path), out_path=str(path.with_suffix(".json")))
    client = WorkerClient(spec, cache_dir=capture_cache)
    client.run()
    outcome = client.outcome()
    assert outcome.exit_code == 3 and outcome.last_stage == "run"
    assert "last stage: run" in outcome.describe(), outcome.describe()
