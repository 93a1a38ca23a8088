"""Refresh the workspace screenshots: `.venv/bin/python docs/img/make_workspace_screenshots.py`.

Every workspace at 1366x768 and 1920x1080, on real inputs: the HF T5 training log of the corpus
(bench/corpus/logs, recorded on an H100) for Overview, Source + Dynamo, AOTAutograd and
Inductor, and the bundled transformer capture (it holds step times) for Timeline. Files are
`ws_<workspace>_<width>.png`; the README and the guide show some of them.
"""

from __future__ import annotations

import lzma
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

from PySide6.QtCore import QSettings  # noqa: E402

from compiler_core.analysis import import_trace  # noqa: E402
from compiler_core.session import Session, load  # noqa: E402
from explorer.app import SESSIONS_DIR, application, settle  # noqa: E402
from explorer.main_window import MainWindow  # noqa: E402

SIZES = ((1366, 768), (1920, 1080))
LOG_WORKSPACES = ("overview", "dynamo", "aot", "inductor")


def t5_log() -> tuple[Session, str]:
    log = Path(tempfile.mkdtemp()) / "hf_t5_train.log"
    with lzma.open(ROOT / "bench" / "corpus" / "logs" / "hf_t5_train.log.xz") as src:
        log.write_bytes(src.read())
    return import_trace(log), log.name


def shoot(session: Session, name: str, workspaces: tuple[str, ...]) -> None:
    for w, h in SIZES:
        window = MainWindow(QSettings(str(Path(tempfile.mkdtemp()) / "l.ini"), QSettings.Format.IniFormat))
        window.resize(w, h)
        window.ensure_panes()
        window.show()
        window.set_session(session, name)
        settle(window, 800)
        for ws in workspaces:
            window.show_stage(ws)
            window.state.updates.flush()
            settle(window, 600)
            out = HERE / f"ws_{ws}_{w}.png"
            window.grab().save(str(out))
            print(out)
        window.close()


def main() -> int:
    application()
    shoot(*t5_log(), LOG_WORKSPACES)
    shoot(load(SESSIONS_DIR / "transformer_block.json"), "transformer_block.json", ("timeline",))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
