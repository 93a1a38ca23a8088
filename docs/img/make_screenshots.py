"""Refresh the README screenshots: `.venv/bin/python docs/img/make_screenshots.py`.

Renders the bundled examples' pre-recorded sessions offscreen at the default 1600×1000 layout;
the `_linked` shot has the GELU line of the transformer selected, to show the linking.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from PySide6.QtCore import QSettings  # noqa: E402

from compiler_core.session import load  # noqa: E402
from compiler_core.session.refs import source_line  # noqa: E402
from explorer.app import SESSIONS_DIR, application, screenshot  # noqa: E402
from explorer.main_window import MainWindow  # noqa: E402


def window() -> MainWindow:
    ini = Path(tempfile.mkdtemp()) / "layout.ini"
    return MainWindow(QSettings(str(ini), QSettings.Format.IniFormat))


def main() -> int:
    application()
    for name in ("transformer_block", "mlp_graph_break"):
        w = window()
        session = load(SESSIONS_DIR / f"{name}.json")
        w.set_session(session, f"{name}.json")
        screenshot(w, HERE / f"{name}.png")
        if name == "transformer_block":
            path, text = next(iter(session.sources.items()))
            line = next(i for i, t in enumerate(text.splitlines(), 1) if "F.gelu(" in t)
            w.selection.select({source_line(path, line)})
            screenshot(w, HERE / f"{name}_linked.png")
        w.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
