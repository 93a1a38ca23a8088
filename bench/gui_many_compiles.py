"""How long the window's GUI thread is blocked by a session of very many compiles.

    QT_QPA_PLATFORM=offscreen python bench/gui_many_compiles.py [--compiles 1000000] [--json]

One real compile (the transformer fixture) plus N-1 empty ones; times `set_session` plus the
event-loop turn after it, i.e. how long the window does not answer. Shown whole (one combo item,
one chart bar and one table row per compile), 1e6 compiles would freeze it for many seconds.
Target: under 5 s for 1e6 on one core of the 2-core dev machine.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 5.0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--compiles", type=int, default=1_000_000)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    app = QApplication.instance() or QApplication([])
    from explorer import gc_policy

    gc_policy.install(app)  # as explorer/app.py does at start-up
    from compiler_core.session import Compile, Session
    from compiler_core.session.codec import load
    from explorer.main_window import MainWindow

    base = load(ROOT / "tests" / "fixtures" / "transformer_block.json").compiles[0]
    n = args.compiles
    rest = tuple(Compile(compile_id=f"{i}/0", frame_id=i, frame_compile_id=0) for i in range(1, n))
    session = Session(compiles=(base, *rest))
    gc_policy.after_load()  # as a session arriving through the app's loader is (actions/loading.py)
    win = MainWindow(QSettings(str(Path("/tmp") / "cs_bench_many.ini"), QSettings.Format.IniFormat))
    win.show()
    win.ensure_panes()
    app.processEvents()
    t0 = time.perf_counter()
    win.set_session(session, "many")
    app.processEvents()
    blocked = time.perf_counter() - t0
    t1 = time.perf_counter()
    win.navigation.compiles.showPopup()  # the selector's list must open at once too
    app.processEvents()
    popup = time.perf_counter() - t1
    win.navigation.compiles.hidePopup()
    print(f"{args.compiles:,} compiles: GUI blocked {blocked:.2f} s on load, selector popup {popup:.2f} s",
          file=sys.stderr)
    figures = [
        {"name": "gui_blocked_s", "value": round(blocked, 2), "unit": "s", "target": TARGET_S,
         "ok": blocked <= TARGET_S},
        {"name": "selector_popup_s", "value": round(popup, 2), "unit": "s", "target": 1.0,
         "ok": popup <= 1.0},
    ]
    if args.json:
        print(json.dumps({"figures": figures}))


if __name__ == "__main__":
    main()
