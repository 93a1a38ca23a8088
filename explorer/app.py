"""Application start-up: the QApplication, the window, the first file, and `--screenshot`.

Start-up stays lean (no torch, no trace importer) so the window is usable in well under a second;
heavy work happens in a thread (trace import) or another process (capture).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QSettings, QTimer
from PySide6.QtWidgets import QApplication

from compiler_core.resource_paths import examples_dir, sessions_dir
from compiler_core.run.spec import ScriptSpec
from compiler_core.worker.capture_outcome import CaptureOutcome
from explorer import gc_policy
from explorer.actions.loading import MODEL, kind_of, load_any
from explorer.actions.run_script import script_autosave_path
from explorer.app_interrupt import INTERRUPTED_EXIT, quit_on_interrupt
from explorer.main_window import MainWindow
from explorer.plain_text import clip

EXAMPLES_DIR = examples_dir()
SESSIONS_DIR = sessions_dir()


def example_paths(name: str) -> tuple[Path, Path]:
    """(model file, pre-recorded session) of a bundled example."""
    return EXAMPLES_DIR / f"{name}.py", SESSIONS_DIR / f"{name}.json"


def application() -> QApplication:
    """The QApplication, with the GUI's one interpreter policy installed (explorer/gc_policy.py:
    the collector on the GUI thread, short thread switches) before any window or job exists."""
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        QCoreApplication.setOrganizationName("CompileScope")
        QCoreApplication.setApplicationName("CompileScope")
        app = QApplication(sys.argv[:1])
    gc_policy.install(app)
    return app


def screenshot(window: MainWindow, out: str | Path) -> None:
    """Render the whole window offscreen to a PNG."""
    window.ensure_panes()
    window.show()
    window.state.updates.flush()  # pane updates a shown session spreads over later turns
    settle(window)
    window.grab().save(str(out))


def settle(window: MainWindow, ms: int = 300) -> None:
    """Let docks, tab bars and deferred layouts take their final geometry before a grab."""
    deadline = time.monotonic() + ms / 1000
    while time.monotonic() < deadline:
        QApplication.processEvents()
        time.sleep(0.01)


def run_app(args: argparse.Namespace) -> int:
    app = application()
    settings = None
    if args.screenshot:  # never read or overwrite the user's layout when rendering
        ini = Path(tempfile.mkdtemp(prefix="compilescope-")) / "layout.ini"
        settings = QSettings(str(ini), QSettings.Format.IniFormat)
    window = MainWindow(settings)
    path, prerecorded = _initial_paths(args)
    run = _script_spec(args)
    if args.screenshot and run is not None:
        window.ensure_panes()
        window.show()
        outcome = window.files.scripts.run_blocking(run)
        screenshot(window, args.screenshot)
        print(args.screenshot)
        if outcome is None or not outcome.ok:
            _report_failure(f"run of {run.model_path}", outcome)
            return 1
        return 0
    if args.screenshot:
        return _screenshot_run(window, path, prerecorded, args.screenshot)
    window.show()
    if run is not None:  # asked for on the command line: no dialog, it starts at once
        QTimer.singleShot(0, lambda: window.files.scripts.start(run))
    elif prerecorded is not None and prerecorded.is_file():
        window.set_session(load_any(prerecorded), str(prerecorded))
        window.files.offer_rerun(str(path))
    elif path is not None:
        QTimer.singleShot(0, lambda: window.files.open_path(str(path)))
    with quit_on_interrupt(app) as interrupt:
        code = app.exec()
    return INTERRUPTED_EXIT if interrupt.received else code


def _script_spec(args: argparse.Namespace) -> ScriptSpec | None:
    """`--run SCRIPT -- ARGS` as a ScriptSpec (cwd: here, as on a shell), or None."""
    if not getattr(args, "run", None):
        return None
    import os

    script = str(Path(args.run).resolve())
    if not Path(script).is_file():
        raise SystemExit(f"no such script: {args.run}")
    return ScriptSpec(model_path=script, out_path=str(script_autosave_path(script)), device=args.device,
                      script_args=tuple(args.script_args), cwd=os.getcwd(), max_steps=args.max_steps,
                      nproc=max(1, args.nproc))


def _initial_paths(args: argparse.Namespace) -> tuple[Path | None, Path | None]:
    if args.path:
        return Path(args.path), None
    if args.example:
        model, session = example_paths(args.example)
        if not model.is_file():
            raise SystemExit(f"no example named {args.example!r} in {EXAMPLES_DIR}")
        return model, session
    return None, None


def _screenshot_run(window: MainWindow, path: Path | None, prerecorded: Path | None, out: str) -> int:
    """Save the window showing `path`; exit status 1 when that session could not be produced.

    A failed capture still saves what it recorded (or an example's pre-recorded session) for a
    person to look at, but a script calling `--screenshot` must not take it for the real thing.
    A file that does not load saves nothing: an empty window would only hide the error."""
    captured = True
    if path is not None and kind_of(path) == MODEL:
        # compiled for real; the pre-recorded session of an example is the fallback
        captured = window.files.capture_blocking(str(path))
        if not captured:
            _report_failure(f"capture of {path}", window.files.last_outcome)
            if prerecorded is not None and prerecorded.is_file():
                window.set_session(load_any(prerecorded), str(prerecorded))
    elif path is not None:
        try:
            session = load_any(path)
        except Exception as exc:  # the GUI's loader shows these verbatim; here they end the run
            print(f"could not open {path}: {type(exc).__name__}: {clip(exc)}", file=sys.stderr)
            return 1
        window.set_session(session, str(path))
    screenshot(window, out)
    print(out)
    return 0 if captured else 1


def _report_failure(what: str, outcome: CaptureOutcome | None) -> None:
    """One line on stderr: what failed, and the first line of why (the worker's full report is
    in the saved session and the window)."""
    reason = outcome.error.strip().split("\n", 1)[0][:300] if outcome is not None else ""
    because = f" ({reason})" if reason else ""
    print(f"{what} failed{because}; the screenshot shows what was recorded", file=sys.stderr)
