"""Run in its own interpreter (as the app is): lay a 50k-node graph out in the Dynamo pane of the
real main window and print, as JSON, the longest gap between ticks of a 5 ms timer.

A clean process matters: a pytest process that has built and closed dozens of windows makes the
GUI thread take the GIL far more often per event-loop turn than the app ever does, and measures
pytest, not CompileScope.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from PySide6.QtCore import QElapsedTimer, QEventLoop, QTimer
from PySide6.QtWidgets import QApplication

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    app = QApplication(sys.argv[:1])
    from explorer import gc_policy

    gc_policy.install(app)  # as explorer/app.py does at start-up
    from explorer.layout.synthetic_graphs import transformer_graph
    from explorer.main_window import MainWindow

    window = MainWindow()
    window.resize(1600, 1000)
    window.show()
    window.ensure_panes()
    for _ in range(40):  # startup finishes: fonts, deferred panes, lexer warm-up
        app.processEvents()
        time.sleep(0.01)
    canvas = window.panes["DynamoPane"].graphs.canvas  # type: ignore[attr-defined]
    # A graph the canvas shows is part of a session the app's loader loaded: made between the
    # policy's before_load and after_load (actions/loading.py), so made here the same way.
    gc_policy.before_load()
    graph = transformer_graph(int(sys.argv[1]) if len(sys.argv) > 1 else 50_000)
    gc_policy.after_load()
    gaps: list[int] = []
    clock = QElapsedTimer()
    clock.start()
    last = [0]

    def tick() -> None:
        now = clock.elapsed()
        gaps.append(now - last[0])
        last[0] = now

    timer = QTimer()
    timer.setInterval(5)
    timer.timeout.connect(tick)
    timer.start()
    loop = QEventLoop()
    canvas.layoutFinished.connect(loop.quit)
    started = time.perf_counter()
    canvas.set_graph(graph)
    last[0] = clock.elapsed()
    loop.exec()
    seconds = time.perf_counter() - started
    # The installed result's first paints, and the collector's first pass over what the layout
    # left alive (its timer ticks every gc_policy.INTERVAL_MS): both are turns of this stall.
    settle = QTimer()
    settle.setSingleShot(True)
    settle.timeout.connect(loop.quit)
    settle.start(gc_policy.INTERVAL_MS + 200)
    loop.exec()
    timer.stop()
    n = canvas.result.arrays.n if canvas.result is not None else 0
    print(json.dumps({"nodes": n, "max_gap_ms": max(gaps), "ticks": len(gaps), "layout_s": seconds}))


if __name__ == "__main__":
    main()
