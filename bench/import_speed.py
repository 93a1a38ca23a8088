"""Time our trace import against the `tlparse` CLI on the largest shared log and a ~100 MB log.

The synthetic log concatenates the shared logs until it reaches ~100 MB (repeated compile ids are
kept apart by the builder). Prints ratios; with `--json` the last line is
`{"figures": [{"name", "value", "unit", "target", "ok"}]}`.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared" / "traces" / "tlparse-inputs"


def _ours(path: Path) -> float:
    from compiler_core.build import import_trace
    from compiler_core.summary import summarize

    t = time.perf_counter()
    summarize(import_trace(path))
    return time.perf_counter() - t


def _tlparse(path: Path, out: Path) -> float:
    exe = shutil.which("tlparse") or str(Path(sys.executable).parent / "tlparse")
    t = time.perf_counter()
    subprocess.run([exe, str(path), "-o", str(out), "--overwrite", "--no-browser"],
                   check=False, capture_output=True)  # fmt: skip
    return time.perf_counter() - t


def _synthetic(target: Path, size: int) -> None:
    logs = sorted(p for p in SHARED.rglob("*") if p.is_file() and p.suffix in (".log", ".txt"))
    with open(target, "wb") as out:
        while out.tell() < size:
            for p in logs:
                data = p.read_bytes()
                out.write(data if data.endswith(b"\n") or not data else data + b"\n")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--mb", type=int, default=100)
    args = ap.parse_args()
    largest = max((p for p in SHARED.rglob("*.log") if p.is_file()), key=lambda p: p.stat().st_size)
    figures = []
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "synthetic.log"
        _synthetic(big, args.mb << 20)
        for label, path in (("largest shared log", largest), (f"{args.mb} MB log", big)):
            ours = min(_ours(path) for _ in range(2))
            theirs = min(_tlparse(path, Path(tmp) / "out") for _ in range(2))  # best of 2, like ours
            ratio = ours / theirs if theirs > 0 else float("inf")
            print(f"{label}: ours {ours:.2f} s, tlparse {theirs:.2f} s, ratio {ratio:.2f}")
            figures.append({"name": f"import/tlparse time ratio, {label}", "value": round(ratio, 3),
                            "unit": "x", "target": 0.5, "ok": ratio <= 0.5})  # fmt: skip
            if path == big:
                figures.append({"name": f"{args.mb} MB log to summary", "value": round(ours, 2),
                                "unit": "s", "target": 5.0, "ok": ours <= 5.0})  # fmt: skip
    if args.json:
        print(json.dumps({"figures": figures}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
