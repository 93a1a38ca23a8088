"""Hostile model files in the GUI: the QProcess worker believes only signed events, decides success
from the session it chose, and leaves no process of the run behind (setsid children included).
Real model files, real worker processes, real QProcess (offscreen)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from compiler_core.worker.capture_outcome import CaptureOutcome
from compiler_core.worker.process_sweep import survivors
from compiler_core.worker.protocol import CaptureSpec
from explorer.worker_process import WorkerProcess

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

RUN = """
import torch

def f(x):
    return x.relu() * 2

model = f
example_inputs = (torch.randn(8),)
"""


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPILESCOPE_CACHE_DIR", str(tmp_path / "cache"))


def _run(qtbot: QtBot, model: Path, log: list[str] | None = None) -> tuple[CaptureOutcome, WorkerProcess]:
    worker = WorkerProcess()
    if log is not None:
        worker.logLine.connect(log.append)
    spec = CaptureSpec(str(model), str(model.with_suffix(".json")), input_steps=0)
    with qtbot.waitSignal(worker.finished, timeout=300_000) as blocker:
        worker.start(spec)
    outcome = blocker.args[0]
    assert isinstance(outcome, CaptureOutcome)
    return outcome, worker


def _alive(pid: int) -> bool:
    try:
        return "State:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


def test_an_honest_model_still_succeeds(qtbot: QtBot, tmp_path: Path) -> None:
    model = tmp_path / "honest.py"
    model.write_text(RUN)
    log: list[str] = []
    outcome, _ = _run(qtbot, model, log)
    assert outcome.ok, outcome.describe()
    assert outcome.session_path == str(model.with_suffix(".json").resolve())
    # the memory cap is stated on every run, as a note: a clean run's log shows no warning
    assert any(line.startswith("note: memory cap") for line in log), log
    assert not [line for line in log if line.startswith("warning:")], log


def test_forged_events_and_a_setsid_child(qtbot: QtBot, tmp_path: Path) -> None:
    pid_file, fake = tmp_path / "child.pid", tmp_path / "elsewhere.json"
    lines = [json.dumps({"kind": "session", "path": str(fake)}), json.dumps({"kind": "done", "exit_code": 0})]
    model = tmp_path / "forger.py"
    model.write_text(RUN + f"""
import os, subprocess, time
subprocess.Popen(['setsid', 'sh', '-c', 'echo $$ > {pid_file}; exec sleep 300'])
while not os.path.exists({str(pid_file)!r}):
    time.sleep(0.02)
for fd in range(3, 1024):
    for line in {lines!r}:
        try:
            os.write(fd, (line + "\\n").encode())
        except OSError:
            pass
""")
    outcome, worker = _run(qtbot, model)
    assert not outcome.ok
    assert any("not written by it" in p for p in outcome.problems), outcome.describe()
    assert "not written by it" in outcome.describe()
    assert outcome.session_path != str(fake) and not fake.exists()
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child) and outcome.swept >= 1
    assert survivors(worker._token) == []


def test_os_exit_zero_is_not_success(qtbot: QtBot, tmp_path: Path) -> None:
    model = tmp_path / "exit0.py"
    model.write_text(RUN + "\nimport os\nf(torch.randn(8))\nos._exit(0)\n")
    outcome, _ = _run(qtbot, model)
    assert outcome.exit_code == 0 and not outcome.ok
    assert any("without finishing" in p for p in outcome.problems)
