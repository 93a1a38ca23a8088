"""Where does a launch-bound step spend its host time when the app's block timer and a plain
loop of the same compiled function disagree? (a step-time diagnosis, H200; see docs/benchmarks.md.)

Earlier rounds (bench/block_order_diag.py, bench/compile_frame_diag.py) showed the app's
`BlockTimer.time_block` reading 25-30 % faster than identical loops defined in bench files, on some
machine instances. This run measures, per block and variant, what the main thread did instead of
only how long it took: its own CPU time (`thread_time`), the process's CPU time (other threads),
voluntary/involuntary context switches (`RUSAGE_THREAD`), the garbage collections that ran inside
the block and their duration, and each step's host time (perf_counter before each call). Then it
samples each variant for a few seconds with py-spy (Python frames, if it can attach) so the two
profiles can be compared frame by frame.

Variants, interleaved round by round, all calling the same `step` with the same inputs:
  app       compiler_core's BlockTimer.time_block (the worker's code)
  copy_main the same loop, defined in this file (run as __main__)
  copy_mod  the same loop, defined in bench/block_order_diag.py (an imported module)
  plain     bench/real_step_times.plain_block (the independent measurement)

Phase `fix` checks the remedy: under each of 20 outer paddings (as if a user's script called
its loop from 20 different depths) it times 17 blocks of the plain loop where it stands, of
the app's `BlockTimer` and of bench/real_step_times.PlainLoop (both starting each block on a
fresh data-stack chunk): the first swings with the padding, the other two should not.

    python bench/host_time_diag.py [MODEL] [MODE] [ROUNDS] [OUTDIR] [PHASES]
    (PHASES: comma-separated from variants,sweep,fix,pyspy; default all)
"""

from __future__ import annotations

import gc
import itertools
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

_GC: dict[str, float] = {"n": 0, "s": 0.0, "t": 0.0, "gen2": 0}


def _gc_cb(phase: str, info: dict[str, int]) -> None:
    if phase == "start":
        _GC["t"] = time.perf_counter()
    else:
        _GC["n"] += 1
        _GC["s"] += time.perf_counter() - _GC["t"]
        _GC["gen2"] += info.get("generation") == 2


def copy_main(timer: Any, step: Any, indices: Any) -> float:
    """Exact copy of BlockTimer.time_block's loop (same statements), defined in __main__."""
    marks: list[Any] = []
    mark = timer._cuda_mark
    error = None
    timer.sync()
    t0 = time.perf_counter()
    try:
        for i in indices:
            marks.append(mark(len(marks)))
            step(i)
    except Exception as exc:
        error = exc
    if error is None:
        marks.append(mark(len(marks)))
    timer.sync()
    return (time.perf_counter() - t0) * 1000.0 / len(indices)


_PAD_LOCALS = ", ".join(f"v{i}" for i in range(96))
exec(  # a frame of ~100 slots: 20 of them move the next call across a 16 KiB chunk
    f"def _pad_frame(n, f):\n    {_PAD_LOCALS} = (None,) * 96\n"
    f"    return f() if n <= 0 else _pad_frame(n - 1, f)\n")


def _padded(n: int, f: Any) -> Any:
    return _pad_frame(n, f)  # type: ignore[name-defined]  # noqa: F821


def _measure(run_one: Any) -> dict[str, float]:
    before_gc = dict(_GC)
    r0 = resource.getrusage(resource.RUSAGE_THREAD)
    th0, pr0, w0 = time.thread_time(), time.process_time(), time.perf_counter()
    run_one()
    w1, th1, pr1 = time.perf_counter(), time.thread_time(), time.process_time()
    r1 = resource.getrusage(resource.RUSAGE_THREAD)
    return {"wall_ms": (w1 - w0) * 1e3, "thread_cpu_ms": (th1 - th0) * 1e3,
            "proc_cpu_ms": (pr1 - pr0) * 1e3, "vcsw": r1.ru_nvcsw - r0.ru_nvcsw,
            "ivcsw": r1.ru_nivcsw - r0.ru_nivcsw, "minflt": r1.ru_minflt - r0.ru_minflt,
            "utime_ms": (r1.ru_utime - r0.ru_utime) * 1e3, "stime_ms": (r1.ru_stime - r0.ru_stime) * 1e3,
            "gc_n": _GC["n"] - before_gc["n"],
            "gc_ms": (_GC["s"] - before_gc["s"]) * 1e3, "gc2": _GC["gen2"] - before_gc["gen2"]}


def _pyspy(pid: int, seconds: float, out: Path) -> subprocess.Popen[bytes] | None:
    exe = shutil.which("py-spy")
    if exe is None:
        return None
    return subprocess.Popen([exe, "record", "--pid", str(pid), "--duration", str(int(seconds)),
                             "--rate", "1000", "--format", "raw", "--nonblocking",
                             "-o", str(out)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def main() -> None:
    import block_order_diag
    import torch
    from real_step_times import plain_block

    from compiler_core.modelfile import load_model_file
    from compiler_core.timeline.run_phase import ModeRun
    from compiler_core.timeline.step_clock import BLOCK

    name = sys.argv[1] if len(sys.argv) > 1 else "hf_llama_infer"
    mode = sys.argv[2] if len(sys.argv) > 2 else "default"
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 12
    out = Path(sys.argv[4] if len(sys.argv) > 4 else "/tmp/host_diag")
    phases = (sys.argv[5] if len(sys.argv) > 5 else "variants,sweep,fix,pyspy").split(",")
    out.mkdir(parents=True, exist_ok=True)
    spec = load_model_file(ROOT / "bench" / "models" / f"{name}.py", device="cuda")
    spec.model.to("cuda")
    run = ModeRun(spec, mode, BLOCK * (rounds + 1), "cuda", lambda r: None, None, paired=True)
    run.prepare()
    fn, mark = run._step_fn, run._mark_step
    inputs = run.inputs(0)
    stamps: list[float] = []
    pc = time.perf_counter

    def step(i: int) -> None:
        stamps.append(pc())
        mark()
        fn(inputs)

    timer = run.timer
    variants = {
        "app": lambda: timer.time_block(step, range(BLOCK)),
        "copy_main": lambda: copy_main(timer, step, range(BLOCK)),
        "copy_mod": lambda: block_order_diag._v1(timer, step, range(BLOCK)),
        "plain": lambda: plain_block(timer, step, lambda: None, 0, BLOCK),
    }
    for _ in range(3):  # compile + warm-up, outside every figure
        timer.time_block(step, range(BLOCK))
    if "fix" in phases:
        _fix_check(name, mode, step, fn, mark, inputs)
    if "variants" in phases:
        _variants(name, mode, variants, stamps, rounds, out)
    if "sweep" in phases:
        _sweep(timer, step)
    if "pyspy" in phases:
        _pyspy_phase(variants, out)
    cpus = Path("/proc/cpuinfo").read_text().count("processor")
    print("cpu", cpus, "affinity", len(os.sched_getaffinity(0)), "torch", torch.__version__)


def _variants(name: str, mode: str, variants: dict[str, Any], stamps: list[float], rounds: int,
              out: Path) -> None:
    """Interleaved blocks of each variant: wall, CPU, faults, switches, GC, per-step host time."""
    from compiler_core.timeline.step_clock import BLOCK

    gc.callbacks.append(_gc_cb)
    rows: dict[str, list[dict[str, float]]] = {k: [] for k in variants}
    steps_host: dict[str, list[float]] = {k: [] for k in variants}
    for r in range(rounds):
        order = list(variants) if r % 2 == 0 else list(reversed(variants))
        for k in order:
            stamps.clear()
            rows[k].append(_measure(variants[k]))
            steps_host[k] += [(b - a) * 1e3 for a, b in itertools.pairwise(stamps)]
    gc.callbacks.remove(_gc_cb)
    summary = {}
    for k, rs in rows.items():
        med = {f: statistics.median(x[f] for x in rs) for f in rs[0]}
        med["step_host_ms_median"] = statistics.median(steps_host[k])
        med["step_host_ms_p90"] = sorted(steps_host[k])[int(0.9 * len(steps_host[k]))]
        med["wall_ms_per_step"] = med["wall_ms"] / BLOCK
        summary[k] = med
        print(f"{name} {mode} {k:9s} " + " ".join(f"{f}={v:.3f}" for f, v in med.items()))
    (out / "blocks.json").write_text(json.dumps({"rows": rows, "summary": summary}))


def _sweep(timer: Any, step: Any) -> None:
    """The same loop entered under `pad` extra frames of ~200 slots each. CPython <= 3.12 frees
    a data-stack chunk when the frame that opened it returns (gh-142183): a step whose hot calls
    straddle a chunk boundary mmaps and munmaps a chunk per call (minor faults show it)."""
    from compiler_core.timeline.step_clock import BLOCK

    for pad in range(0, 40):
        ms, flt = [], []
        for _ in range(2):
            m = _measure(lambda p=pad: _padded(p, lambda: copy_main(timer, step, range(BLOCK))))
            ms.append(m["wall_ms"] / BLOCK)
            flt.append(m["minflt"] / BLOCK)
        print(f"sweep pad={pad:2d} ms/step={min(ms):.3f} minflt/step={min(flt):.0f}")


def _fix_check(name: str, mode: str, step: Any, fn: Any, mark: Any, inputs: Any) -> None:
    """Under each outer padding (as a user's script may call its loop from any depth): the
    plain loop where it stands, the app's timer (each block on a fresh data-stack chunk) and
    the bench's PlainLoop (the same, its own code); 17 blocks each, median block of each, with
    the worst depth's minor page faults per step."""
    from real_step_times import PlainLoop

    from compiler_core.timeline.step_clock import BLOCK, BlockTimer

    def at_this_depth() -> tuple[float, float, float, float, float]:
        timer = BlockTimer("cuda")
        plain = PlainLoop(timer, fn, mark, inputs)
        natural, app, indep, flt_nat, flt_app = [], [], [], [], []
        for _ in range(17):
            m = _measure(lambda: natural.append(copy_main(timer, step, range(BLOCK))))
            flt_nat.append(m["minflt"] / BLOCK)
            m = _measure(lambda: app.append(timer.time_block(step, range(BLOCK)).wall_ms / BLOCK))
            flt_app.append(m["minflt"] / BLOCK)
            indep.append(plain.block(BLOCK))
        return (statistics.median(natural), statistics.median(app), statistics.median(indep),
                statistics.median(flt_nat), statistics.median(flt_app))

    rows = []
    for pad in range(0, 20):
        rows.append(_padded(pad, at_this_depth))
        r = rows[-1]
        print(f"fix pad={pad:2d} natural={r[0]:.3f} app={r[1]:.3f} plain={r[2]:.3f} "
              f"minflt/step natural={r[3]:.0f} app={r[4]:.0f}")
    for k, label in enumerate(("natural", "app", "plain")):
        xs = [r[k] for r in rows]
        print(f"{name} {mode} fix {label}: min {min(xs):.3f} median {statistics.median(xs):.3f} "
              f"max {max(xs):.3f} ms/step over 20 outer depths")
    gaps = [abs(r[1] / r[2] - 1) * 100 for r in rows]
    natural_gap = max(abs(r[0] / r[2] - 1) * 100 for r in rows)
    print(f"{name} {mode} fix app vs plain per outer depth: median {statistics.median(gaps):.2f} % "
          f"max {max(gaps):.2f} %; natural vs plain max {natural_gap:.2f} %")


def _pyspy_phase(variants: dict[str, Any], out: Path) -> None:
    """Each variant alone for a few seconds under py-spy (Python frames, non-blocking)."""
    for k in ("app", "copy_main", "plain"):
        proc = _pyspy(os.getpid(), 4, out / f"pyspy_{k}.txt")
        if proc is None:
            print("py-spy not found")
            break
        time.sleep(0.5)
        t_end = time.perf_counter() + 4.5
        n = 0
        while time.perf_counter() < t_end:
            variants[k]()
            n += 1
        text = proc.communicate(timeout=60)[0].decode(errors="replace")
        print(f"py-spy {k}: {n} blocks; {text.strip().splitlines()[-1:] if text.strip() else ''}")


if __name__ == "__main__":
    main()
