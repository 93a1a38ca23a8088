"""GUI start-up: process launch to a usable window, and opening the saved transformer session.

Each figure runs in a fresh interpreter (as a user's launch would), `--runs` times, median
reported. "Usable" = the main window shown and its first events processed. "Open session" =
`load` + `MainWindow.set_session` + the repaint that follows, inside the running app.
Prints one line per figure; with --json the last line is `{"figures": [...]}`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SESSION = ROOT / "tests" / "fixtures" / "transformer_block.json"

CHILD = r"""
import sys, time, tempfile
t_open = None
from PySide6.QtCore import QSettings
from explorer.app import application
from explorer.main_window import MainWindow
app = application()
ini = tempfile.mkdtemp() + "/s.ini"
w = MainWindow(QSettings(ini, QSettings.Format.IniFormat))
w.show()
app.processEvents()
print("READY", flush=True)
while w._pending:  # the canvas and plot panes, built right after the window appeared
    app.processEvents()
print("PANES", flush=True)
if len(sys.argv) > 1:
    from compiler_core.session import load
    t0 = time.perf_counter()
    w.set_session(load(sys.argv[1]), sys.argv[1])
    app.processEvents()
    w.repaint()
    print("OPENED", time.perf_counter() - t0, flush=True)
"""


def _one_run(session: Path | None) -> tuple[float, float, float | None]:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT)}
    args = [sys.executable, "-c", CHILD] + ([str(session)] if session else [])
    t0 = time.perf_counter()
    proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True)
    assert proc.stdout is not None
    ready = panes = opened = None
    for line in proc.stdout:
        if line.startswith("READY"):
            ready = time.perf_counter() - t0
        elif line.startswith("PANES"):
            panes = time.perf_counter() - t0
        elif line.startswith("OPENED"):
            opened = float(line.split()[1])
    proc.wait()
    if ready is None or panes is None:
        raise RuntimeError("the window never came up")
    return ready, panes, opened


def _figure(name: str, value: float, target: float | None) -> dict[str, object]:
    ok = None if target is None else value <= target
    return {"name": name, "value": round(value, 3), "unit": "s", "target": target, "ok": ok}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    _one_run(None)  # warm the OS file cache, as a second launch would be
    runs = [_one_run(SESSION) for _ in range(args.runs)]
    start, panes, open_ = (statistics.median(r[i] or 0.0 for r in runs) for i in range(3))
    kib = SESSION.stat().st_size >> 10
    figures = [
        _figure("app start to usable window (menus, light panes)", start, 1.0),
        _figure("app start to every pane built (canvas, plots)", panes, None),
        _figure(f"open saved transformer session ({kib} KiB) in the running app", open_, 1.5),
    ]
    for f in figures:
        target = f"target ≤ {f['target']} s, {'ok' if f['ok'] else 'MISSED'}" if f["target"] else "no target"
        print(f"{f['name']}: {f['value']} s ({target})")
    if args.json:
        print(json.dumps({"figures": figures}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
