"""A model file whose model is a plain `nn.Sequential`: Dynamo compiles torch's own wrapper
frame (`inner` in torch/_dynamo/external_utils.py) and no node has a user line. The Source pane
must show the user's model file, not open on torch's wrapper with "0 nodes"."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler_core.session import load
from compiler_core.worker.client import WorkerClient
from compiler_core.worker.protocol import CaptureSpec
from explorer.main_window import MainWindow
from explorer.panes.source_pane import SourcePane

pytestmark = pytest.mark.slow

SEQUENTIAL = """import torch

model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
example_inputs = (torch.randn(8, 16),)
"""


def test_source_pane_opens_on_the_model_file_not_torchs_wrapper(
        window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setenv("COMPILESCOPE_CACHE_DIR", str(tmp_path / "cache"))
    model = tmp_path / "seq_model.py"
    model.write_text(SEQUENTIAL)
    spec = CaptureSpec(str(model), str(tmp_path / "seq.json"))
    WorkerClient(spec).run()
    session = load(tmp_path / "seq.json")
    window.set_session(session, str(model))
    source: SourcePane = window.panes["SourcePane"]  # type: ignore[assignment]
    assert source.path == str(model), source.path
