"""Long run of the session fuzzer: inputs tried, refused, shown, crashes.

    QT_QPA_PLATFORM=offscreen python bench/fuzz_sessions.py [--examples 500] [--json]

The same mutations (drawn from the codec's stored types: rows, tables, links, bounded ints,
enums) and property as `tests/security/test_session_fuzz.py` (CI runs 25), on real session files,
each shown in one real MainWindow. A crash is any exception other
than the codec's clear SessionFormatError, raised by load or by the window while showing an
accepted session. Crashes are printed with the mutated field; the target is zero.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
BASES = ("gpu_stages_h100.json", "mlp_graph_break.json", "timeline/transformer_cpu_timeline.json")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--examples", type=int, default=500, help="per base session")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    app = QApplication.instance() or QApplication([])
    from explorer import gc_policy

    gc_policy.install(app)  # as explorer/app.py does at start-up
    from explorer.main_window import MainWindow
    from tests.security.session_fuzz import check_one, encode, mutations, show_in

    window = MainWindow(QSettings("/tmp/cs_fuzz_sessions.ini", QSettings.Format.IniFormat))
    window.show()
    window.ensure_panes()
    show = show_in(window, app)
    outcomes: Counter[str] = Counter()
    crashes: list[str] = []
    t0 = time.perf_counter()
    def fuzz(name: str) -> None:
        base: dict[str, Any] = json.loads((ROOT / "tests" / "fixtures" / name).read_text())

        @settings(max_examples=args.examples, deadline=None, database=None,
                  phases=[Phase.generate], suppress_health_check=list(HealthCheck))
        @given(doc=mutations(base))
        def run(doc: dict[str, Any]) -> None:
            try:
                outcomes[check_one(encode(doc), show)] += 1
            except Exception as exc:  # counted, not raised: the run goes on
                outcomes["crash"] += 1
                crashes.append(f"{name}: {type(exc).__name__}: {str(exc)[:300]}")

        run()

    for name in BASES:
        fuzz(name)
    elapsed = time.perf_counter() - t0
    tried = sum(outcomes.values())
    print(f"{tried} mutated sessions in {elapsed:.0f} s: {outcomes['refused']} refused with a clear error, "
          f"{outcomes['shown']} shown, {outcomes['crash']} crashes", file=sys.stderr)
    for c in crashes[:20]:
        print("  crash:", c, file=sys.stderr)
    figures = [
        {"name": "sessions_tried", "value": tried, "unit": "inputs", "target": None, "ok": True},
        {"name": "sessions_refused", "value": outcomes["refused"], "unit": "inputs", "target": None,
         "ok": True},
        {"name": "sessions_shown", "value": outcomes["shown"], "unit": "inputs", "target": None,
         "ok": True},
        {"name": "crashes", "value": outcomes["crash"], "unit": "inputs", "target": 0,
         "ok": outcomes["crash"] == 0},
    ]
    if args.json:
        print(json.dumps({"figures": figures}))


if __name__ == "__main__":
    main()
