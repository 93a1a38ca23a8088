"""Cost of the load-time type check on a big real session, against the rest of load.

    python bench/session_validation.py [SESSION.json] [--json]

Without a path it imports `bench/data/hf_llama_train.log.xz` (32-layer HF Llama training step,
~125 MB session) into a temp dir first. Reports json.loads, validate_session and from_jsonable
times (best of 3) and validation as a share of the whole load. Target: the check adds at most a
third to the decode it guards (it is one linear pass over the same data).
"""

from __future__ import annotations

import argparse
import json
import lzma
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from compiler_core.session.validate import validate_session

from compiler_core.session import Session
from compiler_core.session.codec import from_jsonable

DATA = Path(__file__).parent / "data" / "hf_llama_train.log.xz"


def _best(fn: Any, *args: Any, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - t0)
    return best


def _build(tmp: Path) -> Path:
    from compiler_core.analysis import import_trace
    from compiler_core.session import save

    log = tmp / "llama.log"
    log.write_bytes(lzma.decompress(DATA.read_bytes()))
    out = tmp / "llama.json"
    save(import_trace(str(log)), out)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("session", nargs="?")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.session) if args.session else _build(Path(tmp))
        raw = path.read_bytes()
        t_json = _best(json.loads, raw)
        data = json.loads(raw)
        t_validate = _best(validate_session, data)
        t_build = _best(lambda d: from_jsonable(Session, d), data)
    share = t_validate / (t_json + t_validate + t_build)
    mb = len(raw) / 1e6
    lines = [
        f"session {path.name}: {mb:.0f} MB",
        f"json.loads {t_json:.2f} s, validate {t_validate:.2f} s ({mb / t_validate:.0f} MB/s), "
        f"from_jsonable {t_build:.2f} s; validation is {share:.0%} of the load",
    ]
    print("\n".join(lines), file=sys.stderr)
    figures = [
        {"name": "validate_s", "value": round(t_validate, 3), "unit": "s", "target": None, "ok": True},
        {"name": "validate_mb_per_s", "value": round(mb / t_validate, 1), "unit": "MB/s", "target": None,
         "ok": True},
        {"name": "validate_vs_json_loads", "value": round(t_validate / t_json, 2), "unit": "x",
         "target": 0.33, "ok": t_validate / t_json <= 0.33},
    ]
    if args.json:
        print(json.dumps({"figures": figures}))


if __name__ == "__main__":
    main()
