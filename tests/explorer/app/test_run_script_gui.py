"""File ▸ Run script… for real: an unmodified script in the worker, its compile showing in the
panes while it still runs, step times streaming into the timeline, Stop keeping everything; a
script that dies outright still leaves its compiles on screen."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from compiler_core.run.spec import ScriptSpec
from explorer.actions.run_script import RunScriptDialog
from explorer.app import SESSIONS_DIR as SESSIONS
from explorer.main_window import MainWindow
from tests.conftest import FIXTURES

SCRIPTS = FIXTURES / "scripts"


def _spec(name: str, tmp_path: Path, *args: str) -> ScriptSpec:
    return ScriptSpec(model_path=str(SCRIPTS / name), out_path=str(tmp_path / "s.json"),
                      script_args=args, cwd=str(tmp_path))


def test_dialog_builds_the_spec_with_shell_words(qtbot: QtBot, tmp_path: Path) -> None:
    dialog = RunScriptDialog(str(SCRIPTS / "train_loader.py"), "--epochs 3 --name 'two words'")
    qtbot.addWidget(dialog)
    dialog.max_steps.setValue(50)
    spec = dialog.spec(str(tmp_path / "out.json"))
    assert spec.script_args == ("--epochs", "3", "--name", "two words")
    assert spec.cwd == str(SCRIPTS) and spec.max_steps == 50 and spec.nproc == 1
    assert dialog.problem() == ""
    dialog.script.setText(str(tmp_path / "missing.py"))
    assert dialog.problem().startswith("No such script")


@pytest.mark.slow
def test_compiles_arrive_live_and_stop_keeps_the_run(
        qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    scripts = window.files.scripts
    with qtbot.waitSignal(scripts.liveSession, timeout=300_000) as live:
        scripts.start(_spec("endless.py", tmp_path))
    assert window.files.worker.running()  # shown while the script is still running
    assert live.args[0].compiles and window.state.current is not None
    assert window.state.current.dynamo_graph is not None
    timeline = window.panes["TimelinePane"]
    qtbot.waitUntil(lambda: "<lambda>" in timeline.data.series  # type: ignore[attr-defined]
                    and len(timeline.data.series["<lambda>"].steps) >= 30, timeout=60_000)  # type: ignore[attr-defined]
    assert "compiled calls timed" in scripts.status.text()
    with qtbot.waitSignal(window.files.worker.finished, timeout=60_000) as done:
        scripts.stop_button.click()
    assert done.args[0].ok, done.args[0].describe()
    qtbot.waitUntil(lambda: window.state.session.meta.extra.get("stopped") == "stopped by the user",
                    timeout=60_000)
    session = window.state.session
    assert session.compiles and len([s for s in session.timeline if s.mode == "<lambda>"]) >= 30
    assert "still going" in scripts.output.toPlainText()  # prints went to the Output window
    assert window.isVisible()


@pytest.mark.slow
def test_a_script_that_dies_outright_leaves_its_compiles_on_screen(
        qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    scripts = window.files.scripts
    with qtbot.waitSignal(window.files.worker.finished, timeout=300_000) as done:
        scripts.start(_spec("dies_hard.py", tmp_path))
    assert not done.args[0].ok and not done.args[0].session_path
    qtbot.waitUntil(lambda: bool(window.state.session.compiles), timeout=30_000)
    session = window.state.session
    assert session.meta.origin == "script" and session.compiles[0].inductor
    # the CLI's recovery (capture_outcome.recover_session): the failure as the CLI words it
    errors = [d for d in session.diagnostics if d.severity == "error"]
    assert any("SIGKILL" in d.message and d.stage == "run" for d in errors), errors
    assert "killed" in scripts.status.text() or "signal" in scripts.status.text()
    assert scripts.status.isVisible() and scripts.output_button.isVisible()
    # another session opened: the run's line and buttons no longer describe what is shown
    with qtbot.waitSignal(window.state.sessionChanged, timeout=60_000):
        window.files.open_path(str(SESSIONS / "mlp_graph_break.json"))
    assert not scripts.status.isVisible() and not scripts.output_button.isVisible()
    assert "dies_hard" not in window.statusBar().currentMessage()


def test_compilescope_run_command_line() -> None:
    from explorer.app import _script_spec
    from explorer.launch import parse_args

    args = parse_args(["--run", str(SCRIPTS / "shape_change.py"), "--max-steps", "5", "--", "8", "--x", "y"])
    spec = _script_spec(args)
    assert spec is not None and spec.model_path == str(SCRIPTS / "shape_change.py")
    assert spec.script_args == ("8", "--x", "y") and spec.max_steps == 5 and spec.nproc == 1
    assert _script_spec(parse_args([str(SCRIPTS / "shape_change.py")])) is None  # a plain open


@pytest.mark.slow
@pytest.mark.parametrize(("script", "why"), [("exits_early.py", "without finishing its protocol"),
                                             ("forges_events.py", "not written by it")])
def test_a_hostile_script_is_no_success_in_the_gui(
        qtbot: QtBot, tmp_path: Path, script: str, why: str) -> None:
    """The QProcess worker verifies a script run's signed events like a capture's,
    so `os._exit(0)` or fake events on inherited fds end as a failure that says why."""
    from compiler_core.worker.capture_outcome import CaptureOutcome
    from explorer.worker_process import WorkerProcess

    worker = WorkerProcess()
    with qtbot.waitSignal(worker.finished, timeout=300_000) as blocker:
        worker.start(_spec(script, tmp_path))
    outcome = blocker.args[0]
    assert isinstance(outcome, CaptureOutcome) and outcome.exit_code == 0  # the exit code alone would pass
    assert not outcome.ok and any(why in p for p in outcome.problems), outcome.describe()
    assert why in outcome.describe()
