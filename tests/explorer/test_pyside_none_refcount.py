"""Regression guard for PySide6 6.12.0's None refcount bug on Python 3.11.

6.12.0 decrements None's refcount in calls such as QGraphicsItem.setPos/setToolTip; after ~20k
calls the interpreter aborts with `Fatal Python error: none_dealloc`. The canvas makes such calls
by the thousand, so we pin a clean version and prove it here (in a subprocess, since the failure
mode is an abort, not an exception).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

CODE = textwrap.dedent(
    """
    import sys
    from PySide6.QtWidgets import QApplication, QGraphicsRectItem
    app = QApplication([])
    before = sys.getrefcount(None)
    item = QGraphicsRectItem(0, 0, 1, 1)
    for i in range(50_000):
        item.setPos(float(i), 0.0)
        item.setToolTip("n")
    after = sys.getrefcount(None)
    print("drift", before - after)
    """
)


def test_fifty_thousand_setpos_and_settooltip_calls_survive() -> None:
    result = subprocess.run(
        [sys.executable, "-c", CODE], capture_output=True, text=True, timeout=120,
        env={"QT_QPA_PLATFORM": "offscreen", "PATH": ""},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    drift = int(result.stdout.split()[-1])
    assert drift < 1000, f"None lost {drift} references over 50k calls"
