"""App sessions of the corpus: each entry captured through the app's own CLI, in fresh processes.

    python bench/corpus/app_sessions.py --device cuda --out DIR [--jobs 4] [--only a,b]

Per entry: `python -m compiler_core capture models/E.py --device D -o DIR/E.json` (its trace log
beside it, `E.trace.log`), with `--input-steps` where the file has `make_inputs` (so recompiles
show), and for the TIMED entries a timeline of eager, default and reduce-overhead (CUDA-graph facts).
One entry also runs as a user's script (`run bench/corpus/runner.py -- models/E.py`), so a capture and
a script run of one model can be compared. The sessions are what `bench/oracle.py` checks.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SKIP = ("dist_", "trouble_cancel_midcompile")  # multi-rank entries and a killed run are logs only
TIMED = ("hf_qwen2_infer_bf16", "tv_vit_b16_train")
SCRIPT_ENTRY = "hf_gptneox_train"


def command(entry: str, device: str, out: Path) -> list[str]:
    model = HERE / "models" / f"{entry}.py"
    cmd = [sys.executable, "-m", "compiler_core", "capture", str(model), "--device", device,
           "-o", str(out / f"{entry}.json"), "--timeout", "420", "-q"]
    if "def make_inputs" in model.read_text():
        cmd += ["--input-steps", "2"]
    if entry in TIMED:
        cmd += ["--steps", "30", "--modes", "eager,default,reduce-overhead"]
    return cmd


def script_command(device: str, out: Path) -> list[str]:
    model = HERE / "models" / f"{SCRIPT_ENTRY}.py"
    return [sys.executable, "-m", "compiler_core", "run", "-q", "--timeout", "420",
            "-o", str(out / f"script_{SCRIPT_ENTRY}.json"), str(HERE / "runner.py"), "--",
            str(model), "--device", device, "--result", str(out / f"script_{SCRIPT_ENTRY}.result.json")]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="cuda")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--jobs", type=int, default=4)
    p.add_argument("--only", default="")
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    entries = sorted(f.stem for f in (HERE / "models").glob("*.py")
                     if not f.stem.startswith(("_", *SKIP)))
    if args.only:
        entries = [e for e in entries if e in args.only.split(",")]
    jobs = {e: command(e, args.device, args.out) for e in entries}
    if not args.only or SCRIPT_ENTRY in args.only:
        jobs[f"script_{SCRIPT_ENTRY}"] = script_command(args.device, args.out)

    def one(item: tuple[str, list[str]]) -> str:
        name, cmd = item
        t = time.perf_counter()
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
        (args.out / f"{name}.stderr.txt").write_text(done.stderr[-20000:])
        return f"{name}: exit {done.returncode} in {time.perf_counter() - t:.0f} s"

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for line in pool.map(one, jobs.items()):
            print(line, flush=True)


if __name__ == "__main__":
    main()
