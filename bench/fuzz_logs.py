"""Fuzz the trace import with type-confusing and deep-nesting mutations of REAL records.

The same strategy as the CI test (tests/compiler_core/trace/test_hostile_records.py), run much
longer: each input is a real log (tlparse's shared inputs, the bundled fixtures, the real-model
logs in bench/data) with one value of one record replaced by another JSON type or by deep
nesting. An input "crashes" if `import_trace`, `summarize` or a save/load round trip raises,
or if the builder's last-resort guard had to skip a record (a check we lack). Prints counts;
with `--json` the last line is `{"figures": [...]}`.

    python bench/fuzz_logs.py --examples 2000 --json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SHARED = Path(os.environ.get("COMPILESCOPE_SHARED_TRACES",
                           ROOT.parent / "shared" / "traces" / "tlparse-inputs")) / "inputs"  # fmt: skip


def _logs(include_bench: bool) -> list[Path]:
    out = [ROOT / "tests" / "fixtures" / "traces" / "tlparse_simple.log.gz"]
    if SHARED.is_dir():
        out += sorted(p for p in SHARED.iterdir() if p.is_file() and p.stat().st_size < 4 << 20)
    if include_bench:
        out += sorted((ROOT / "bench" / "data").glob("hf_llama_dynamic.log.xz"))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--examples", type=int, default=1000, help="mutated inputs per log")
    ap.add_argument("--bench-logs", action="store_true", help="also the (slower) real-model logs")
    args = ap.parse_args()

    from hypothesis import HealthCheck, given, settings

    from compiler_core.analysis import import_trace
    from compiler_core.analysis.session_builder import INTERNAL_SKIP
    from compiler_core.queries.summary import summarize
    from compiler_core.session import dumps, loads
    from tests import fuzz_records as fr

    tried = 0
    crashes: Counter[str] = Counter()
    skipped_records = 0
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "fuzz.log"
        for log in _logs(args.bench_logs):
            lead, records = fr.split_records(fr.real_log(str(log)))
            if not any(isinstance(r.meta, dict) for r in records):
                continue

            def one(m: fr.Mutation, lead: list[bytes], records: list[fr.LogRecord], log: Path) -> None:
                nonlocal tried, skipped_records
                tried += 1
                target.write_bytes(fr.apply(lead, records, m))
                try:
                    session = import_trace(target)
                    summarize(session)
                    loads(dumps(session))
                except Exception as exc:
                    where = traceback.extract_tb(exc.__traceback__)[-1]
                    crashes[f"{type(exc).__name__} at {Path(where.filename).name}:{where.lineno}"] += 1
                    print(f"CRASH {log.name}: {m.describe()}: {exc!s:.120}", file=sys.stderr)
                    return
                skipped_records += sum("record skipped" in d.message for d in session.diagnostics)
                internal = [d for d in session.diagnostics if INTERNAL_SKIP in d.message]
                if internal:
                    crashes[f"guarded: {internal[0].message[:80]}"] += 1

            def bound(lead: list[bytes], records: list[fr.LogRecord], log: Path) -> Any:
                def run(m: fr.Mutation) -> None:
                    one(m, lead, records, log)

                return run

            check = given(m=fr.mutations(records))(bound(lead, records, log))
            settings(max_examples=args.examples, deadline=None, database=None,
                     suppress_health_check=list(HealthCheck))(check)()  # fmt: skip
            print(f"{log.name}: {tried} inputs so far, {sum(crashes.values())} crashes", file=sys.stderr)
    elapsed = time.perf_counter() - t0
    total = sum(crashes.values())
    print(f"inputs tried: {tried}; crashes: {total}; records skipped with a warning: {skipped_records}; "
          f"{elapsed:.0f} s")  # fmt: skip
    for what, n in crashes.most_common():
        print(f"  {n} x {what}")
    if args.json:
        print(json.dumps({"figures": [
            {"name": "mutated real-record logs imported", "value": tried, "unit": "inputs",
             "target": args.examples, "ok": tried >= args.examples},
            {"name": "crashes on mutated real records", "value": total, "unit": "inputs", "target": 0,
             "ok": total == 0},
        ]}))  # fmt: skip
    return 0 if total == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
