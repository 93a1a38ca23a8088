"""Refresh the deep-model README shots: `.venv/bin/python docs/img/make_large_model_screenshots.py`.

Imports the real 32-layer HF Llama training log (bench/data) and renders, offscreen, the Dynamo
pane in focus mode at 1366x768 centred on the folded layers, and the AOT joint graph at
1600x1000 around its forward/backward split.
"""

from __future__ import annotations

import lzma
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

from PySide6.QtCore import QSettings  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from compiler_core.analysis import import_trace  # noqa: E402
from compiler_core.session import Session  # noqa: E402
from explorer.main_window import MainWindow  # noqa: E402


def settle(app: QApplication, seconds: float = 6.0) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.02)


def shot(app: QApplication, session: Session, size: tuple[int, int], stage: str, out: Path) -> None:
    ini = Path(tempfile.mkdtemp()) / "layout.ini"
    win = MainWindow(QSettings(str(ini), QSettings.Format.IniFormat))
    win.resize(*size)
    win.show()
    win.set_session(session, "hf_llama_train.log")
    win.set_focus_mode(True)
    win.navigation.stage_actions[stage].trigger()
    settle(app)
    canvas = win.panes[{"dynamo": "DynamoPane", "aot": "AotPane"}[stage]].graphs.canvas  # type: ignore[attr-defined]
    res = canvas.result
    scene, n = res.scene, res.arrays.n
    if stage == "dynamo":
        fold = res.tree.fold[0]
        canvas.view.center_on_point(float(scene.x[n + fold]), float(scene.y[n + fold]), 0.9)
    else:
        _, y = scene.sections[0]
        canvas.view.scale, canvas.view.tx = 0.6, 20.0
        canvas.view.ty = canvas.view.height() * 0.25 - y * 0.6
        canvas.view.update()
    settle(app, 2.0)
    win.grab().save(str(out))


def main() -> None:
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    log = Path(tempfile.mkdtemp()) / "hf_llama_train.log"
    with lzma.open(ROOT / "bench" / "data" / "hf_llama_train.log.xz") as src, log.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    session = import_trace(log)
    shot(app, session, (1366, 768), "dynamo", HERE / "llama_dynamo_1366.png")
    shot(app, session, (1600, 1000), "aot", HERE / "llama_aot_1600.png")


if __name__ == "__main__":
    main()
