"""Which part of a capture's leftovers slows the eager steps timed after it, asked so that host
drift cannot answer for it.

    python bench/capture_residue_pingpong.py MODEL.py --device cuda --roles captured,profiled,compiled --json

Per-process medians cannot isolate a process-wide cost on a host whose speed drifts 15-40 %
between minutes (`capture_residue_diag.py`). So worker processes live side by side on the same
device: `clean` loads the model file and nothing else; each other role loads it, keeps that copy
aside, and then does one thing:

- `captured`: the whole capture job (`CaptureJob`, steps=0) as the app's worker runs it;
- `profiled`: three eager steps under the app's kernel profile (`profile_steps`: torch.profiler,
  CPU and CUDA activity), as the timeline's profile pass runs it;
- `profiled_teardown`: the same with `TEARDOWN_CUPTI=1`, Kineto's switch that detaches CUPTI
  when a profile ends;
- `compiled`: `torch.compile` (default mode) of another copy and three steps of it, no profiler.

The parent then has every worker time blocks of eager steps of its pre-capture copy in turn (10
steps between two synchronisations; never two at once, the order rotated every round), so drift
hits all alike, and reports each role's median over the clean one's. Then it applies one remedy
after another to every role but `clean` (cumulative) and asks again:

- `compile_workers`: Inductor's compile-worker pool shut down (its processes and their threads);
- `empty_cache`: the CUDA caching allocator's free blocks released;
- `compiler_reset`: `torch.compiler.reset()` and a full collection;
- `gc_freeze`: every surviving object moved out of the collector's reach.

With each timing the workers report what ran beside the timed loop: CPU time of their other
threads and of their child processes during the blocks (/proc schedstat, ns), the main thread's
involuntary context switches, and cudaMalloc/cudaFree calls. And once, each worker's process
state (modes, hooks, interval timers, signal handlers, thread names, children, torch flags, the
code behind hot entry points, environment), printed as a diff against the clean worker's.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
REMEDIES = ("compile_workers", "empty_cache", "compiler_reset", "gc_freeze")


# ---- worker side -------------------------------------------------------------------------

def _tasks() -> list[str]:
    return sorted(os.listdir("/proc/self/task"))


def _children() -> list[int]:
    kids: list[int] = []
    for tid in _tasks():
        with contextlib.suppress(OSError):
            kids += [int(x) for x in Path(f"/proc/self/task/{tid}/children").read_text().split()]
    return kids


def _run_ns(path: str) -> int:
    try:
        return int(Path(path).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0


def _beside_ns() -> tuple[int, int]:
    """CPU ns so far of this process's threads other than the main one, and of its children's
    threads (descendants one level down; a pool's workers are its children)."""
    main = str(os.getpid())
    own = sum(_run_ns(f"/proc/self/task/{t}/schedstat") for t in _tasks() if t != main)
    kids = 0
    for pid in _children():
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        kids += sum(_run_ns(f"/proc/{pid}/task/{t}/schedstat") for t in tids)
    return own, kids


def _nonvoluntary() -> int:
    for line in Path(f"/proc/self/task/{os.getpid()}/status").read_text().splitlines():
        if line.startswith("nonvoluntary_ctxt_switches"):
            return int(line.split()[1])
    return 0


def _code_of(obj: Any) -> str:
    code = getattr(getattr(obj, "__func__", obj), "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code is not None else repr(type(obj))


def process_state() -> dict[str, Any]:
    """Everything of the process that could cost time per op or per Python call."""
    import signal

    import torch
    from capture_residue_diag import state
    from torch.nn.modules import module as nn_module

    found = state()
    found["threads"] = sorted(t.name for t in threading.enumerate())
    found["tasks"] = len(_tasks())
    found["children"] = len(_children())
    found["itimers"] = [signal.getitimer(t) for t in (signal.ITIMER_REAL, signal.ITIMER_VIRTUAL,
                                                       signal.ITIMER_PROF)]
    found["signal_handlers"] = {s.name: repr(signal.getsignal(s)) for s in
                                (signal.SIGALRM, signal.SIGPROF, signal.SIGVTALRM, signal.SIGCHLD,
                                 signal.SIGUSR1, signal.SIGINT, signal.SIGTERM)}
    found["switch_interval"] = sys.getswitchinterval()
    found["global_module_hooks"] = {name: len(value) for name, value in vars(nn_module).items()
                                    if name.startswith("_global_") and isinstance(value, dict)}
    found["flags"] = {
        "cudnn_benchmark": torch.backends.cudnn.benchmark,
        "matmul_tf32": torch.backends.cuda.matmul.allow_tf32,
        "cudnn_tf32": torch.backends.cudnn.allow_tf32,
        "fp32_precision": torch.get_float32_matmul_precision(),
        "deterministic": torch.are_deterministic_algorithms_enabled(),
        "anomaly": torch.is_anomaly_enabled(),
        "interop_threads": torch.get_num_interop_threads(),
        "inference_mode": torch.is_inference_mode_enabled(),
    }
    if torch.cuda.is_available():
        found["flags"]["sync_debug_mode"] = torch.cuda.get_sync_debug_mode()
        stats = torch.cuda.memory_stats()
        found["allocator"] = {k: stats.get(k) for k in ("reserved_bytes.all.current", "num_device_alloc",
                                                        "num_alloc_retries", "segment.all.current")}
    found["hot_code"] = {name: _code_of(obj) for name, obj in (
        ("Module.__call__", torch.nn.Module.__call__), ("Module._call_impl", torch.nn.Module._call_impl),
        ("Tensor.__torch_function__", torch.Tensor.__torch_function__),
        ("F.linear", torch.nn.functional.linear), ("F.scaled_dot_product_attention",
                                                    torch.nn.functional.scaled_dot_product_attention))}
    found["environ"] = dict(sorted(os.environ.items()))
    found["modules"] = len(sys.modules)
    return found


def remedy(name: str) -> None:
    import torch

    if name == "compile_workers":
        from torch._inductor import async_compile

        async_compile.shutdown_compile_workers()
    elif name == "empty_cache" and torch.cuda.is_available():
        torch.cuda.empty_cache()
    elif name == "compiler_reset":
        torch.compiler.reset()
        gc.collect()
    elif name == "gc_freeze":
        gc.collect()
        gc.freeze()


def time_blocks(spec: Any, device: str, blocks: int) -> dict[str, Any]:
    import torch

    cuda = device.startswith("cuda")
    allocs = (lambda: torch.cuda.memory_stats().get("num_device_alloc", 0)) if cuda else (lambda: 0)
    own0, kids0 = _beside_ns()
    nv0, al0 = _nonvoluntary(), allocs()
    ms = [eager_ms_one(spec, device) for _ in range(blocks)] if blocks else []
    own1, kids1 = _beside_ns()
    return {"ms": ms, "threads_ns": own1 - own0, "children_ns": kids1 - kids0,
            "nonvoluntary": _nonvoluntary() - nv0, "device_allocs": allocs() - al0}


def eager_ms_one(spec: Any, device: str) -> float:
    """One block of eager steps (no warm-up blocks dropped: the parent drops its first rounds)."""
    from capture_residue_diag import _to, block_ms

    inputs = getattr(spec, "_pingpong_inputs", None)
    if inputs is None:
        inputs = spec._pingpong_inputs = _to(spec.example_inputs(), device)
    return block_ms(spec, inputs, device)


def serve(role: str, model_path: str, device: str) -> None:
    """Answer the parent's JSON lines on a private copy of stdout (torch may print on fd 1)."""
    out: IO[str] = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    from capture_residue_diag import do_phase

    from compiler_core.modelfile import load_model_file

    if role == "profiled_teardown":
        os.environ["TEARDOWN_CUPTI"] = "1"  # read by Kineto when a profile ends
    spec = load_model_file(model_path, device=device)
    spec.model.to(device)
    if role == "captured":
        do_phase("capture", model_path, device, spec)
    elif role in ("profiled", "profiled_teardown"):
        from compiler_core.timeline.kernel_profile import profile_steps

        profile_steps(lambda: eager_ms_one(spec, device), device, 1)
    elif role == "compiled":
        import torch

        other = load_model_file(model_path, device=device)
        other.model.to(device)
        other.model = torch.compile(other.model)
        for _ in range(3):
            eager_ms_one(other, device)
    out.write(json.dumps({"ready": role}) + "\n")
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd["op"] == "time":
            reply: Any = time_blocks(spec, device, cmd["blocks"])
        elif cmd["op"] == "remedy":
            remedy(cmd["name"])
            reply = {"done": cmd["name"]}
        elif cmd["op"] == "state":
            reply = process_state()
        else:
            return
        out.write(json.dumps(reply, default=str) + "\n")


# ---- parent side -------------------------------------------------------------------------

class Worker:
    def __init__(self, role: str, args: argparse.Namespace) -> None:
        self.role = role
        self.proc = subprocess.Popen([sys.executable, __file__, args.model, "--device", args.device,
                                      "--serve", role], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, cwd=ROOT)
        self.ready = self._read()

    def ask(self, **cmd: Any) -> Any:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        return self._read()

    def _read(self) -> Any:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"{self.role} worker ended (rc {self.proc.wait()})")
        return json.loads(line)


def compare(workers: list[Worker], pairs: int, warm: int = 2) -> dict[str, Any]:
    """`pairs` rounds of one block per worker (order rotated every round; the first `warm`
    rounds dropped): each worker's median, its median over the first (clean) worker's, and the
    quartiles of its per-round ratios."""
    ms: dict[str, list[float]] = {w.role: [] for w in workers}
    beside: dict[str, list[dict[str, Any]]] = {w.role: [] for w in workers}
    for k in range(pairs + warm):
        shift = k % len(workers)
        for w in workers[shift:] + workers[:shift]:
            r = w.ask(op="time", blocks=1)
            if k >= warm:
                ms[w.role] += r["ms"]
                beside[w.role].append(r)
    clean = workers[0].role
    row: dict[str, Any] = {}
    for role, values in ms.items():
        ratios = sorted(y / x for x, y in zip(ms[clean], values, strict=True))
        n = len(beside[role]) * 10
        row[role] = {"ms": statistics.median(values),
                     "ratio": statistics.median(values) / statistics.median(ms[clean]),
                     "round_ratio_q1_q3": [ratios[len(ratios) // 4], ratios[(3 * len(ratios)) // 4]],
                     "threads_us_per_step": sum(r["threads_ns"] for r in beside[role]) / n / 1e3,
                     "children_us_per_step": sum(r["children_ns"] for r in beside[role]) / n / 1e3,
                     "nonvoluntary_per_step": sum(r["nonvoluntary"] for r in beside[role]) / n,
                     "device_allocs_per_step": sum(r["device_allocs"] for r in beside[role]) / n}
    return row


def diff(a: dict[str, Any], b: dict[str, Any], prefix: str = "") -> list[str]:
    out = []
    for key in sorted(set(a) | set(b)):
        x, y = a.get(key), b.get(key)
        if isinstance(x, dict) and isinstance(y, dict):
            out += diff(x, y, f"{prefix}{key}.")
        elif x != y:
            out.append(f"{prefix}{key}: clean={x!r} captured={y!r}")
    return out


ROLES = ("captured", "profiled", "profiled_teardown", "compiled")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model")
    p.add_argument("--device", default="cuda")
    p.add_argument("--pairs", type=int, default=12, help="rounds of one block per worker")
    p.add_argument("--roles", default=",".join(ROLES))
    p.add_argument("--serve", choices=("clean", *ROLES))
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    if args.serve:
        serve(args.serve, args.model, args.device)
        return
    t0 = time.monotonic()
    workers = [Worker(role, args) for role in ("clean", *args.roles.split(","))]
    print(f"workers ready in {time.monotonic() - t0:.0f} s", flush=True)
    report: dict[str, Any] = {"model": args.model, "rows": [], "state_diff": {}}
    clean_state = workers[0].ask(op="state")
    for w in workers[1:]:
        found = report["state_diff"][w.role] = diff(clean_state, w.ask(op="state"))
        print(f"state of {w.role} beside clean:\n  " + "\n  ".join(found[:60]), flush=True)
    for step in ("none", *REMEDIES):
        if step != "none":
            for w in workers[1:]:
                w.ask(op="remedy", name=step)
        row = {"after": step, **compare(workers, args.pairs)}
        report["rows"].append(row)
        cells = "  ".join(f"{role} {v['ms']:.3f} ms x{v['ratio']:.3f} ({v['round_ratio_q1_q3'][0]:.2f}-"
                          f"{v['round_ratio_q1_q3'][1]:.2f}; beside {v['threads_us_per_step']:.0f}+"
                          f"{v['children_us_per_step']:.0f} us)"
                          for role, v in row.items() if role != "after")
        print(f"after {step:<16} {cells}", flush=True)
    for w in workers:
        assert w.proc.stdin is not None
        w.proc.stdin.close()
        w.proc.wait(timeout=60)
    if args.json:
        print(json.dumps(report, default=str))


if __name__ == "__main__":
    main()
