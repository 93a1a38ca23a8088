"""--train/--no-train override the file: inference graphs without backward, or a joint graph."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from compiler_core.worker.client import WorkerClient
from compiler_core.worker.protocol import CaptureSpec, worker_argv
from compiler_core.worker.worker_main import build_parser, spec_from_args

ModelFile = Callable[[str, str], Path]

TRAINS = """
import torch

model = torch.nn.Linear(4, 3)
example_inputs = (torch.randn(2, 4),)

def train_step(model, inputs):
    model(*inputs).sum().backward()
"""

INFERS = """
import torch

model = torch.nn.Linear(4, 3)
example_inputs = (torch.randn(2, 4),)
"""


@pytest.mark.parametrize("train", [None, True, False])
def test_train_flag_round_trips_through_argv(tmp_path: Path, train: bool | None) -> None:
    spec = CaptureSpec(str(tmp_path / "m.py"), str(tmp_path / "s.json"), train=train)
    argv = worker_argv(spec, events_fd=3)
    assert ("--train" in argv, "--no-train" in argv) == (train is True, train is False)
    assert spec_from_args(build_parser().parse_args(argv[3:])).train is train


def _capture(path: Path, cache: Path, train: bool | None) -> tuple[bool | None, object]:
    spec = CaptureSpec(str(path), str(path.with_suffix(".json")), input_steps=0, train=train)
    client = WorkerClient(spec, cache_dir=cache)
    assert client.run().returncode == 0, client.error
    session = client.recover_session()
    assert session is not None
    (compiled,) = session.compiles
    return session.meta.train, compiled.aot


@pytest.mark.slow
def test_no_train_runs_a_train_step_file_as_inference(model_file: ModelFile, capture_cache: Path) -> None:
    train, aot = _capture(model_file("trains", TRAINS), capture_cache, train=False)
    assert train is False
    assert aot is not None and aot.inference is not None and aot.backward is None  # type: ignore[attr-defined]


@pytest.mark.slow
def test_train_backpropagates_a_file_without_train_step(model_file: ModelFile, capture_cache: Path) -> None:
    train, aot = _capture(model_file("infers", INFERS), capture_cache, train=True)
    assert train is True
    assert aot is not None and aot.backward is not None and aot.inference is None  # type: ignore[attr-defined]
