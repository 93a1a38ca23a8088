"""Starting the GUI where there is no display (over SSH), and stopping it with Ctrl-C.

Qt aborts inside QApplication's constructor when it finds no display, so these run main.py in a
real subprocess with DISPLAY, WAYLAND_DISPLAY and QT_QPA_PLATFORM removed, as a user's SSH
session has them. Timeouts are loose: a start takes about a second here.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication

from explorer.app import SESSIONS_DIR
from explorer.app_display import (
    DEAD_DISPLAY_HINT,
    NO_DISPLAY_EXIT,
    NO_DISPLAY_HINT,
    check_display,
    x_server_answers,
)
from explorer.app_interrupt import INTERRUPTED_EXIT, quit_on_interrupt
from tests.conftest import ROOT

SESSION = SESSIONS_DIR / "small_cnn.json"
QT_ABORT_WORDS = ("Aborted", "xcb", "qt.qpa.plugin", "Traceback")


def no_display_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"}}
    return {**env, "HOME": str(home)}  # the user's saved layout is neither read nor written


def main_py(args: list[str], env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "main.py", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)  # fmt: skip


@pytest.mark.parametrize("args", [[str(SESSION)], []], ids=["session", "no-arguments"])
def test_a_window_without_a_display_exits_2_with_one_line_saying_how(tmp_path: Path, args: list[str]) -> None:
    result = main_py(args, no_display_env(tmp_path), timeout=60)
    assert result.returncode == NO_DISPLAY_EXIT, result.stderr[-2000:]
    assert result.stderr.strip().splitlines() == [NO_DISPLAY_HINT]
    assert "ssh -X" in result.stderr and "QT_QPA_PLATFORM=offscreen" in result.stderr
    assert not [word for word in QT_ABORT_WORDS if word in result.stderr]


def test_a_screenshot_without_a_display_renders_offscreen_on_its_own(tmp_path: Path) -> None:
    out = tmp_path / "shot.png"
    result = main_py([str(SESSION), "--screenshot", str(out)], no_display_env(tmp_path))
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == str(out)
    image = QImage(str(out))
    assert not image.isNull() and image.width() > 800 and image.height() > 600
    assert not [word for word in QT_ABORT_WORDS if word in result.stderr]


@pytest.mark.parametrize("content", [None, '{"compiles": '], ids=["missing", "broken-json"])
def test_a_screenshot_of_a_file_that_does_not_load_fails_and_saves_nothing(
    tmp_path: Path, content: str | None
) -> None:
    session = tmp_path / "session.json"
    if content is not None:
        session.write_text(content)
    out = tmp_path / "shot.png"
    result = main_py([str(session), "--screenshot", str(out)], no_display_env(tmp_path))
    assert result.returncode == 1, result.stderr[-2000:]
    assert f"could not open {session}" in result.stderr
    assert "Traceback" not in result.stderr
    assert not out.exists()


@pytest.mark.slow
def test_a_screenshot_of_a_model_whose_capture_fails_exits_nonzero(tmp_path: Path) -> None:
    """The window of what was recorded is still saved for a person; the status tells a script."""
    model = tmp_path / "broken_model.py"
    model.write_text('raise RuntimeError("this model is broken on purpose")\n')
    out = tmp_path / "shot.png"
    result = main_py([str(model), "--screenshot", str(out)], no_display_env(tmp_path), timeout=600)
    assert result.returncode == 1, result.stderr[-2000:]
    assert f"capture of {model} failed" in result.stderr
    assert "this model is broken on purpose" in result.stderr


def test_ctrl_c_in_the_terminal_quits_the_gui_without_a_traceback(tmp_path: Path) -> None:
    env = {**no_display_env(tmp_path), "QT_QPA_PLATFORM": "offscreen"}  # a window, drawn nowhere
    proc = subprocess.Popen([sys.executable, "main.py", str(SESSION)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        time.sleep(5)  # up in about a second: the window is shown and the event loop runs
        assert proc.poll() is None, proc.communicate()[1][-2000:]
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == INTERRUPTED_EXIT, stderr[-2000:]
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr


def test_a_signal_wakes_an_event_loop_that_runs_no_python(qapp: QApplication) -> None:
    """With no Python slot running, only the wakeup socket gets the handler run: without it the
    SIGINT below would wait for the 60 s fallback timer."""
    previous = signal.getsignal(signal.SIGINT)
    sender = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT))
    with quit_on_interrupt(qapp) as interrupt:
        fallback = threading.Timer(60, qapp.quit)  # never reached unless the wakeup is broken
        sender.start()
        fallback.start()
        started = time.monotonic()
        qapp.exec()
        fallback.cancel()
    assert interrupt.received
    assert time.monotonic() - started < 30
    assert signal.getsignal(signal.SIGINT) is previous  # pytest's Ctrl-C works again


def test_only_a_start_that_needs_no_window_is_moved_offscreen() -> None:
    env: dict[str, str] = {}
    assert check_display(needs_window=False, env=env, platform="linux") is None
    assert env == {"QT_QPA_PLATFORM": "offscreen"}
    chosen = {"QT_QPA_PLATFORM": "minimal"}
    assert check_display(needs_window=False, env=chosen, platform="linux") is None
    assert chosen == {"QT_QPA_PLATFORM": "minimal"}  # the user's choice stands
    assert check_display(needs_window=True, env={}, platform="linux") == NO_DISPLAY_HINT
    assert check_display(needs_window=True, env={"WAYLAND_DISPLAY": "wayland-0"}, platform="linux") is None
    assert check_display(needs_window=True, env={}, platform="darwin") is None


@pytest.fixture
def x_display() -> Iterator[str]:
    """A DISPLAY whose TCP port (6000 + N) accepts connections, as an X server's does."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    for number in range(60, 160):
        try:
            sock.bind(("127.0.0.1", 6000 + number))
            break
        except OSError:
            continue
    else:
        pytest.skip("no free port in 6060-6159 for a stand-in X server")
    sock.listen()
    with sock:
        yield f"127.0.0.1:{number}"


def _dead_display() -> str:
    """A DISPLAY nothing listens at (what an ended `ssh -X` session leaves behind)."""
    for number in range(160, 260):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            if probe.connect_ex(("127.0.0.1", 6000 + number)) != 0:
                return f"127.0.0.1:{number}"
    pytest.skip("every port in 6160-6259 answers")


def test_a_stale_display_is_told_apart_from_a_live_one(x_display: str) -> None:
    """Qt's xcb plugin aborts (exit 134) when DISPLAY points at no server: asked first."""
    assert check_display(needs_window=True, env={"DISPLAY": x_display}, platform="linux") is None
    dead = _dead_display()
    hint = check_display(needs_window=True, env={"DISPLAY": dead}, platform="linux")
    assert hint == DEAD_DISPLAY_HINT.format(display=dead)
    assert x_server_answers(x_display) and not x_server_answers(dead)
    assert x_server_answers("odd-name"), "a DISPLAY this cannot read is left to Qt"


@pytest.mark.parametrize(("extra", "status"), [({}, NO_DISPLAY_EXIT), ({"DISPLAY": "live"}, 0),
                                               ({"DISPLAY": "dead"}, NO_DISPLAY_EXIT),
                                               ({"QT_QPA_PLATFORM": "offscreen"}, 0)])  # fmt: skip
def test_the_shell_launcher_asks_the_same_question(tmp_path: Path, extra: dict[str, str],
                                                   status: int, x_display: str) -> None:  # fmt: skip
    """scripts/app runs `python -m explorer.app_display` to choose its no-display fallback."""
    named = {"live": x_display, "dead": _dead_display()}
    env = {**no_display_env(tmp_path), **{k: named.get(v, v) for k, v in extra.items()}}
    result = subprocess.run([sys.executable, "-m", "explorer.app_display"], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=60)  # fmt: skip
    assert (result.returncode, result.stdout, result.stderr) == (status, "", "")


def test_installed_entry_answers_version_without_loading_qt() -> None:
    """`compilescope --version` (the installed entry runs explorer.launch:main) needs no display
    and loads no Qt."""
    code = ("import sys; sys.argv = ['compilescope', '--version']\n"
            "from explorer.launch import main\n"
            "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
            "print('qt' if any(m.startswith('PySide6') for m in sys.modules) else 'no-qt', code)")
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd=ROOT, timeout=120)
    assert out.stdout.startswith("compilescope "), out.stdout + out.stderr
    assert out.stdout.strip().endswith("no-qt 0"), out.stdout
