"""Cost of the load-time type check on a big real session, against a plain parse of the same file.

    python bench/session_validation.py [SESSION.json] [--json]

Without a path it imports `bench/data/hf_llama_train.log.xz` (32-layer HF Llama training step)
and saves its session into a temp dir first. A session file is checked while it is parsed: msgspec
decodes it into the structs compiler_core/session/wire.py derives from the model, so every value
is type-checked in the same pass. Reported (best of 3): the same parse with no types (msgspec into
lists and dicts, checking nothing: the peer), the typed parse and check into the stored structs,
the stdlib's `json.loads`, and the whole `codec.loads` (parse, check, then the model's
dataclasses). Target: the check adds at most a third to the parse it guards (typed / untyped
≤ 1.33).
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

import msgspec

from compiler_core.session.codec import loads
from compiler_core.session.packed import _DECODER

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
        t_plain = _best(msgspec.json.decode, raw)
        t_check = _best(_DECODER.decode, raw)
        t_load = _best(loads, raw)
    mb = len(raw) / 1e6
    print(f"session {path.name}: {mb:.1f} MB; json.loads {t_json:.3f} s, typed parse and check "
          f"{t_check:.3f} s ({mb / t_check:.0f} MB/s), whole load {t_load:.3f} s",
          file=sys.stderr)  # fmt: skip
    figures = [
        {"name": f"typed parse and check, HF Llama train session ({mb:.0f} MB)", "value": round(t_check, 3),
         "unit": "s", "target": None, "ok": None},
        {"name": f"typed parse and check vs the same parse unchecked ({t_plain:.3f} s)",
         "value": round(t_check / t_plain, 2), "unit": "x", "target": 1.33, "ok": t_check / t_plain <= 1.33},
        {"name": f"typed parse and check vs json.loads ({t_json:.3f} s)", "value": round(t_check / t_json, 2),
         "unit": "x", "target": None, "ok": None},
        {"name": "whole load into the model (codec.loads)", "value": round(t_load, 3), "unit": "s",
         "target": None, "ok": None},
        {"name": "whole load vs json.loads", "value": round(t_load / t_json, 2), "unit": "x",
         "target": None, "ok": None},
    ]  # fmt: skip
    if args.json:
        print(json.dumps({"figures": figures}))


if __name__ == "__main__":
    main()
