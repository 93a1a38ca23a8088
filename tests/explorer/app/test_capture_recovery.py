"""After a worker crash the GUI shows the session the CLI recovers: the run's meta (mode,
device, torch) and the failure as an error diagnostic, not a bare re-import of the trace that
lost them. Both go through `capture_outcome.recover_session`; this checks the result is the
same, on a real worker that compiles a real function and then segfaults (ctypes reads address 0)."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from compiler_core.session import Session
from compiler_core.worker.capture_outcome import CaptureOutcome
from compiler_core.worker.client import WorkerClient
from compiler_core.worker.protocol import CaptureSpec
from explorer.main_window import MainWindow

pytestmark = pytest.mark.slow

SEGFAULTS = """
import ctypes
import torch

def f(x):
    return x.relu() * 2

model = f
example_inputs = (torch.randn(8),)

def train_step(model, inputs):
    model(*inputs)
    ctypes.string_at(0)  # a real segfault, after the compile was traced
"""


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPILESCOPE_CACHE_DIR", str(tmp_path / "cache"))


def _spec(model: Path, out: Path) -> CaptureSpec:
    return CaptureSpec(str(model), str(out), mode="reduce-overhead")


def _facts(session: Session) -> tuple[object, ...]:
    errors = tuple((d.severity, d.message, d.stage) for d in session.diagnostics if d.severity == "error")
    meta = session.meta
    return (meta.mode, meta.device, meta.origin, meta.torch_version, [c.compile_id for c in session.compiles],
            errors)  # fmt: skip


def test_a_crashed_capture_gives_the_gui_the_session_the_cli_recovers(
        qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:  # fmt: skip
    model = tmp_path / "segfaults.py"
    model.write_text(SEGFAULTS)

    cli = WorkerClient(_spec(model, tmp_path / "cli.json"))
    exit_info = cli.run()
    assert exit_info.signal == signal.SIGSEGV
    cli_session = cli.recover_session()
    assert cli_session is not None

    spec = _spec(model, tmp_path / "gui.json")
    with qtbot.waitSignal(window.files.worker.finished, timeout=300_000) as blocker:
        window.files.start_capture(spec, show_progress=False)
    outcome = blocker.args[0]
    assert isinstance(outcome, CaptureOutcome) and not outcome.ok
    assert outcome.signal == signal.SIGSEGV and outcome.last_stage == "run"
    qtbot.waitUntil(lambda: not window.files.loading_capture and bool(window.state.session.compiles),
                    timeout=120_000)
    gui_session = window.state.session

    assert gui_session.meta.mode == "reduce-overhead" and gui_session.meta.device == "cpu"
    assert gui_session.meta.origin == "capture"
    (error,) = [d for d in gui_session.diagnostics if d.severity == "error"]
    assert "SIGSEGV" in error.message and error.stage == "run"
    assert _facts(gui_session) == _facts(cli_session)
    assert Path(spec.out_path).is_file(), "the GUI saves the recovered session where the CLI does"
    assert "mode: reduce-overhead" in window.status_label.text()
