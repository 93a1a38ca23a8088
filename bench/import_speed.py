"""Our trace import against `tlparse` on real deep-model logs (bench/data), one line per figure.

Per log (decompressed to a temp dir): `python -m compiler_core import LOG -o OUT.json` and
`tlparse LOG -o DIR --overwrite --no-browser`, each in a fresh process, timed as wall time and as
the child's CPU (user + sys, which a loaded shared machine does not inflate); our peak RSS; the
session's size over the log's. The ~100 MB case is a real one, not small logs glued together: a
`torchrun` directory of N ranks, each the Llama training log (what an 8-GPU data-parallel run
leaves: one similar log per rank).

With `--json` the last line is `{"figures": [{"name", "value", "unit", "target", "ok"}]}`.
Targets: import ≤ 0.5x tlparse on each deep log; ≤ 5 s for ~100 MB; session ≤ 2x log.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_figures import decompressed, figure

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / "data"
DEFAULT_LOGS = ("hf_llama_train", "hf_bert_train", "hf_gpt2_train")


def run_child(cmd: list[str]) -> tuple[float, float, float]:
    """(wall s, CPU s, peak RSS MB) of one child process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        err = proc.stderr.read().decode()[-2000:] if proc.stderr else ""
        raise RuntimeError(f"{cmd[:4]} failed ({proc.returncode}): {err}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def tlparse_exe() -> str:
    return shutil.which("tlparse") or str(Path(sys.executable).parent / "tlparse")



def size_of(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*")) if path.is_dir() else path.stat().st_size


def compile_bytecode() -> None:
    """Byte-compile the package first, as an install does: a checkout run with
    PYTHONDONTWRITEBYTECODE (set on the shared dev box) would otherwise compile every module of
    the import path from source in every timed run (CPU time that no user pays)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "compiler_core")], check=True,
                   stdout=subprocess.DEVNULL)  # fmt: skip


def measure(label: str, log: Path, tmp: Path, runs: int, peer: bool = True) -> list[dict[str, object]]:
    out = tmp / f"{label}.json"
    ours = [run_child([sys.executable, "-m", "compiler_core", "import", str(log), "-o", str(out)])
            for _ in range(runs)]  # fmt: skip
    wall = statistics.median(r[0] for r in ours)
    cpu = statistics.median(r[1] for r in ours)
    rss = max(r[2] for r in ours)
    ratio = out.stat().st_size / size_of(log)
    figures = [
        figure(f"{label}: our import, wall", wall, "s", None),
        figure(f"{label}: our import, CPU", cpu, "s", None),
        figure(f"{label}: our import peak RSS", rss, "MB", None),
        figure(f"{label}: session size / log size", ratio, "x", 2.0),
    ]
    if peer:
        tl = [run_child([tlparse_exe(), str(log), "-o", str(tmp / "tl"), "--overwrite", "--no-browser"])
              for _ in range(runs)]  # fmt: skip
        tl_wall = statistics.median(r[0] for r in tl)
        tl_cpu = statistics.median(r[1] for r in tl)
        figures += [
            figure(f"{label}: tlparse, wall", tl_wall, "s", None),
            figure(f"{label}: tlparse, CPU", tl_cpu, "s", None),
            figure(f"{label}: our import / tlparse, wall", wall / tl_wall, "x", 0.5),
            figure(f"{label}: our import / tlparse, CPU", cpu / tl_cpu, "x", 0.5),
        ]
    else:
        figures.append(figure(f"{label}: our import, wall (target 5 s)", wall, "s", 5.0))
    return figures



def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--logs", nargs="*", default=list(DEFAULT_LOGS))
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--ranks", type=int, default=7, help="ranks in the ~100 MB torchrun directory (0: skip)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    figures: list[dict[str, object]] = []
    compile_bytecode()
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        for name in args.logs:
            figures += measure(name, decompressed(name, tmp), tmp, args.runs)
        if args.ranks:
            llama = decompressed("hf_llama_train", tmp)
            ranks = tmp / "ranks"
            ranks.mkdir()
            for r in range(args.ranks):
                os.link(llama, ranks / f"dedicated_log_torch_trace_rank_{r}_abc.log")
            mb = size_of(ranks) / 1e6
            figures += measure(f"{args.ranks}-rank Llama directory ({mb:.0f} MB)", ranks, tmp, 1, peer=False)
    for f in figures:
        verdict = "" if f["target"] is None else f" (target ≤ {f['target']}: {'ok' if f['ok'] else 'MISSED'})"
        print(f"{f['name']}: {f['value']} {f['unit']}{verdict}")
    print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if args.json:
        print(json.dumps({"figures": figures}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
