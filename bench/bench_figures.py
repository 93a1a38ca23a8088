"""What several bench scripts share: one figure record and the real-model logs, decompressed.

The bench scripts run as `python bench/NAME.py`, so this module is imported by its plain name
(the script's folder is first on sys.path). A figure is one row of the `--json` line every bench
prints last: `{"figures": [{"name", "value", "unit", "target", "ok"}]}`; `ok` is None when the
figure has no target.
"""

from __future__ import annotations

import json
import lzma
import shutil
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"


def figure(name: str, value: float, unit: str, target: float | None) -> dict[str, object]:
    """A figure whose target is an upper bound (lower is better)."""
    ok = None if target is None else value <= target
    return {"name": name, "value": round(value, 3), "unit": unit, "target": target, "ok": ok}


def decompressed(name: str, tmp: Path) -> Path:
    """`bench/data/NAME.log.xz` as a plain log in `tmp` (once per folder)."""
    out = tmp / f"{name}.log"
    if not out.exists():
        with lzma.open(DATA / f"{name}.log.xz") as src, open(out, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
    return out


def report(figures: list[dict[str, object]], as_json: bool) -> None:
    """One line per figure with its verdict; with `as_json`, the figures JSON as the last line."""
    for f in figures:
        target = f"target ≤ {f['target']}, {'ok' if f['ok'] else 'MISSED'}" if f["target"] else "no target"
        print(f"{f['name']}: {f['value']} {f['unit']} ({target})")
    if as_json:
        print(json.dumps({"figures": figures}))
