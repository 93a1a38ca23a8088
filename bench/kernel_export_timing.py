"""An exported Triton kernel's own timing against the profiler's time for that kernel, same GPU.

Per corpus model (bench/corpus/models): a real capture on the GPU (`capture --device cuda
--modes default`, whose profiled steps give each kernel's µs per step), then `export`, then each
exported Triton kernel file run in a fresh process. The file's `X us per launch`
(`triton.testing.do_bench`) is compared with the profiler's µs per step divided by the kernel's
launches per step. Kernels the profile did not see, or that run under 2 µs (where launch overhead
and timer resolution dominate both numbers), are left out and counted.

Figures per model: the median and the 90th percentile of |file / profiler - 1| over its kernels
(target: median ≤ 0.2, the ±20 % of the export's promise), and the share of kernels outside ±20 %.
Needs CUDA; without it the script says so and exits 2. With `--json` the last line is
`{"figures": [{"name", "value", "unit", "target", "ok"}]}`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_figures import figure, report

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "bench" / "corpus" / "models"
DEFAULT_MODELS = ("hf_distilbert_infer", "hf_phi_infer")
_LINE = re.compile(r": (\d+(?:\.\d+)?) us per launch")
MIN_US = 2.0


def cuda_available() -> bool:
    code = "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"
    return subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def run(cmd: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=1800, check=False)


def model_ratios(model: str, tmp: Path, steps: int) -> tuple[list[float], int]:
    """|file / profiler - 1| per timed Triton kernel of `model`, and how many were left out."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TORCHINDUCTOR_CACHE_DIR": str(tmp / "cache")}
    session, folder = tmp / f"{model}.json", tmp / model
    done = run(
        [
            sys.executable,
            "-m",
            "compiler_core",
            "capture",
            str(MODELS / f"{model}.py"),
            "--device",
            "cuda",
            "--modes",
            "default",
            "--steps",
            str(steps),
            "-q",
            "-o",
            str(session),
        ],
        ROOT,
        env,
    )
    if done.returncode != 0:
        raise RuntimeError(f"capture of {model} failed: {done.stderr[-2000:]}")
    done = run([sys.executable, "-m", "compiler_core", "export", str(session), "-o", str(folder)], ROOT, env)
    if done.returncode != 0:
        raise RuntimeError(f"export of {model} failed: {done.stderr[-2000:]}")
    index = json.loads((folder / "index.json").read_text())
    ratios: list[float] = []
    left_out = 0
    file_env = {k: v for k, v in env.items() if k != "PYTHONPATH"}  # the files need no checkout
    for c in index["compiles"]:
        for k in c["kernels"]:
            measured = k["us_per_step"].get("default")
            launches = k["launches_per_step"]
            if k["language"] != "triton" or not measured or not launches or measured / launches < MIN_US:
                left_out += k["language"] == "triton"
                continue
            out = run([sys.executable, k["file"]], folder, file_env)
            m = _LINE.search(out.stdout)
            if out.returncode != 0 or not m:
                raise RuntimeError(
                    f"{k['file']} failed ({out.returncode}): {(out.stdout + out.stderr)[-2000:]}"
                )
            ratios.append(abs(float(m.group(1)) / (measured / launches) - 1))
    return ratios, left_out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--models", default=",".join(DEFAULT_MODELS), help="corpus model names, comma-separated"
    )
    parser.add_argument("--steps", type=int, default=30, help="timeline steps of the capture (default 30)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON last")
    args = parser.parse_args()
    if not cuda_available():
        print("kernel_export_timing needs a CUDA GPU: the comparison is with the GPU profiler's times")
        return 2
    figures: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="cs-kernel-export-") as tmp:
        for model in args.models.split(","):
            ratios, left_out = model_ratios(model, Path(tmp), args.steps)
            if not ratios:
                raise RuntimeError(f"{model}: no Triton kernel both profiled and ≥ {MIN_US} µs")
            ratios.sort()
            outside = sum(r > 0.2 for r in ratios) / len(ratios)
            figures += [
                figure(
                    f"{model} median |file/profiler - 1| ({len(ratios)} kernels, {left_out} left out)",
                    statistics.median(ratios),
                    "ratio",
                    0.2,
                ),
                figure(
                    f"{model} p90 |file/profiler - 1|", ratios[int(0.9 * (len(ratios) - 1))], "ratio", None
                ),
                figure(f"{model} kernels outside ±20 %", outside, "share", None),
            ]
    report(figures, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
