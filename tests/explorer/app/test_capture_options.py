"""The capture options dialog: every choice lands in the CaptureSpec and the worker's argv."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from compiler_core.worker.protocol import worker_argv
from explorer.actions.capture_dialog import CaptureOptionsDialog


def test_defaults_follow_the_file_and_run_no_timeline(qtbot: QtBot) -> None:
    dialog = CaptureOptionsDialog("m.py", first_time=False)
    qtbot.addWidget(dialog)
    spec = dialog.spec("s.json")
    assert (spec.device, spec.mode, spec.dynamic, spec.train, spec.steps) == ("cpu", None, None, None, 0)
    assert dialog.steps.text() == "none"
    assert not dialog.timeline_modes["default"].isEnabled(), "no timeline run, no modes to pick"
    argv = worker_argv(spec)
    assert "--train" not in argv and "--no-train" not in argv and "--mode" not in argv


def test_every_option_reaches_the_worker_argv(qtbot: QtBot, tmp_path: Path) -> None:
    dialog = CaptureOptionsDialog(str(tmp_path / "m.py"), first_time=True)
    qtbot.addWidget(dialog)
    dialog.device.setCurrentText("cuda")
    dialog.mode.setCurrentIndex(dialog.mode.findData("max-autotune"))
    dialog.dynamic.setCurrentIndex(dialog.dynamic.findData(False))
    dialog.train.setCurrentIndex(dialog.train.findData(False))
    dialog.steps.setValue(5)
    assert dialog.timeline_modes["default"].isEnabled()
    dialog.timeline_modes["default"].setChecked(False)
    dialog.timeline_modes["reduce-overhead"].setChecked(True)
    spec = dialog.spec(str(tmp_path / "s.json"))
    assert (spec.device, spec.mode, spec.dynamic, spec.train) == ("cuda", "max-autotune", False, False)
    assert (spec.steps, spec.modes) == (5, "eager,reduce-overhead")
    argv = worker_argv(spec)
    for flag in (["--no-train"], ["--no-dynamic"], ["--steps", "5"], ["--modes", "eager,reduce-overhead"],
                 ["--mode", "max-autotune"], ["--device", "cuda"]):
        i = argv.index(flag[0])
        assert argv[i:i + len(flag)] == flag
    dialog.train.setCurrentIndex(dialog.train.findData(True))
    assert "--train" in worker_argv(dialog.spec("s.json"))
    dialog.show()
    dialog.grab().save(str(tmp_path / "dialog.png"))
    assert dialog.width() < 900, "the mode checkboxes must not blow the dialog up"
