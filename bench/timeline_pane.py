"""Does the timeline pane keep up with a live run? Feed it samples as fast as a pipe delivers.

    python bench/timeline_pane.py --json

Offscreen Qt, no torch. The recorded CPU run in tests/fixtures/timeline/ is replayed as the
worker streams it (mode_start, sample, timeline_event records), repeated with shifted steps to
`--samples` samples over all five modes, in chunks every millisecond, while a 2 ms probe timer
records the event loop's gaps. Figures: records/s absorbed, plot repaints/s (target ≥ 30), the
largest event-loop gap (target ≤ 100 ms) and one full repaint's time with every sample loaded.
Last line with --json: `{"figures": [{"name", "value", "unit", "target", "ok"}, ...]}`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

FIXTURE = ROOT / "tests" / "fixtures" / "timeline" / "transformer_cpu_timeline.json"
MODES = ("eager", "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


def records(total: int) -> list[dict[str, Any]]:
    """Real samples, re-labelled across the five modes and repeated to `total` samples."""
    from compiler_core.session import load
    from compiler_core.timeline.records import to_record

    session = load(FIXTURE)
    per_mode = total // len(MODES)
    source = [s for s in session.timeline if s.mode == "default"]
    events = [e for e in session.timeline_events if e.mode == "default"]
    out: list[dict[str, Any]] = []
    for mode in MODES:
        out.append({"event": "mode_start", "mode": mode, "steps": per_mode})
        for i in range(per_mode):
            k, s = divmod(i, len(source))
            out.append({**to_record(source[s]), "mode": mode, "step": i})
            out += [{**to_record(e), "mode": mode, "step": i} for e in events
                    if e.step == source[s].step and k == 0]
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--samples", type=int, default=20_000)
    p.add_argument("--chunk", type=int, default=50, help="records delivered per 1 ms tick")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from explorer.panes.timeline_pane import TimelinePane

    _app = QApplication.instance() or QApplication([])  # held: the pane needs a live application
    pane = TimelinePane()
    pane.resize(1400, 600)
    pane.show()
    feed = records(args.samples)
    state = {"next": 0, "last": time.perf_counter(), "max_gap": 0.0}
    # A loop of its own, not the application's: Qt 6's `quit()` closes every window, and the
    # closed pane lets its plot's items go before the full repaint measured below.
    loop = QEventLoop()

    def probe() -> None:
        now = time.perf_counter()
        state["max_gap"] = max(state["max_gap"], now - state["last"])
        state["last"] = now

    def push() -> None:
        start = int(state["next"])
        for r in feed[start:start + args.chunk]:
            pane.add_record(r)
        state["next"] = start + args.chunk
        if state["next"] >= len(feed):
            loop.quit()

    timers = [QTimer(), QTimer()]
    timers[0].timeout.connect(probe)
    timers[1].timeout.connect(push)
    timers[0].start(2)
    timers[1].start(1)
    t0, repaints0 = time.perf_counter(), pane.repaints
    loop.exec()
    elapsed = time.perf_counter() - t0
    for t in timers:
        t.stop()
    rate = (pane.repaints - repaints0) / elapsed
    pane._plotted = -1
    t1 = time.perf_counter()
    pane.flush()
    full_ms = (time.perf_counter() - t1) * 1000
    figures = [
        {"name": "records absorbed", "value": round(len(feed) / elapsed), "unit": "records/s",
         "target": "", "ok": None},
        {"name": "plot repaints while feeding", "value": round(rate, 1), "unit": "per s",
         "target": ">= 30", "ok": rate >= 30},
        {"name": "max event-loop gap", "value": round(state["max_gap"] * 1000, 1), "unit": "ms",
         "target": "<= 100", "ok": state["max_gap"] <= 0.1},
        {"name": f"full repaint, {args.samples} samples", "value": round(full_ms, 1), "unit": "ms",
         "target": "", "ok": None},
    ]
    for f in figures:
        print(f"{f['name']}: {f['value']} {f['unit']} (target {f['target'] or '-'})", file=sys.stderr)
    if args.json:
        print(json.dumps({"figures": figures}))
    return 0 if all(f["ok"] is not False for f in figures) else 1


if __name__ == "__main__":
    raise SystemExit(main())
