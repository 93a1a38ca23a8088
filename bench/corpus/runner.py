"""One corpus run, in a fresh process, with plain PyTorch: what a user's own script does.

    python bench/corpus/runner.py MODEL.py --device cuda --result OUT.json [--scenario steps|twice|explain]
    python -m torch.distributed.run --standalone --nproc_per_node 2 bench/corpus/runner.py MODEL.py \
        --dist ddp|fsdp --device cuda --result OUT.json

The model file is loaded with importlib (the CompileScope model-file format: `model`,
`example_inputs`, optional `train_step`, `compile_options`, `make_inputs`; corpus extras:
`corpus_steps` (calls, default 2), `dynamic_dims` ({input index: [dims]} marked with
`torch._dynamo.mark_dynamic` after the move to the device) and `corpus_facts` (a dict recorded as
is)). The model is compiled with `torch.compile(model, **compile_options)` and stepped: step i
takes `make_inputs(i)` when the file has it, else `example_inputs()`; a training step is the file's
`train_step(compiled, inputs)`, an inference step a forward under `torch.no_grad()`.

Scenarios:
- `steps`: the run above (the caller sets TORCH_TRACE; a crash is recorded, then re-raised, so the
  process exits non-zero with the traceback a user sees);
- `twice`: the same, then `torch._dynamo.reset()` and a second `torch.compile` + steps, one process;
- `explain`: no compile: `torch._dynamo.explain(model)(*args, **kwargs)` for every call the first
  step makes of the model (the step then goes on in eager), recorded as the oracle.

After the run, cheap facts PyTorch itself keeps are written to the result: Dynamo's counters
(graph breaks by reason, unique graphs) and `torch._dynamo.utils.get_compilation_metrics()`
(one row per frame compile: recompile reason, fail type, op counts). Imports nothing of CompileScope
(checked: `compilescope_imported` in the result).
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import importlib.util
import json
import os
import platform
import sys
import time
import traceback
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import torch

METRIC_FIELDS = (
    "compile_id", "co_name", "co_filename", "co_firstlineno", "cache_size", "accumulated_cache_size",
    "guard_count", "shape_env_guard_count", "graph_op_count", "graph_node_count", "graph_input_count",
    "recompile_reason", "fail_type", "fail_reason", "fail_user_frame_filename", "fail_user_frame_lineno",
    "restart_reasons", "has_guarded_code", "is_forward", "is_runtime", "entire_frame_compile_time_s",
    "backend_compile_time_s", "inductor_compile_time_s", "code_gen_time_s", "dynamo_time_before_restart_s",
)


def load(path: str):
    spec = importlib.util.spec_from_file_location("corpus_user_model", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["corpus_user_model"] = module
    sys.path.insert(0, str(Path(path).resolve().parent))
    spec.loader.exec_module(module)
    return module


def to(value, device):
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, (tuple, list)):
        return type(value)(to(v, device) for v in value)
    if isinstance(value, dict):
        return {k: to(v, device) for k, v in value.items()}
    return value


def shapes(value):
    if isinstance(value, torch.Tensor):
        return "x".join(map(str, value.shape)) + " " + str(value.dtype).replace("torch.", "")
    if isinstance(value, (tuple, list)):
        return [shapes(v) for v in value]
    if isinstance(value, dict):
        return {k: shapes(v) for k, v in value.items()}
    return repr(value)[:40]


def jsonable(value):
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=str) if isinstance(value, (set, frozenset)) else value
        return [jsonable(v) for v in items]
    return str(value)


def versions() -> dict:
    out = {"python": platform.python_version(), "torch": torch.__version__}
    for name in ("transformers", "torchvision", "torchaudio", "timm", "diffusers", "triton"):
        mod = sys.modules.get(name)
        if mod is not None:
            out[name] = getattr(mod, "__version__", "?")
    out["cuda"] = torch.version.cuda
    return out


def device_facts(device: str) -> dict:
    out = {"device": device, "host_cpus": os.cpu_count()}
    if device.startswith("cuda") and torch.cuda.is_available():
        out["gpu"] = torch.cuda.get_device_name()
        out["visible_gpus"] = torch.cuda.device_count()
    return out


class Crash:
    """The exception a step raised, as the result records it."""

    @staticmethod
    def record(exc: BaseException) -> dict:
        tb = traceback.extract_tb(exc.__traceback__)
        user = [f for f in tb if "site-packages" not in f.filename and "/torch/" not in f.filename]
        frame = (user or tb)[-1] if tb else None
        return {
            "type": type(exc).__name__,
            "message": str(exc)[:2000],
            "frame": f"{frame.filename}:{frame.lineno} in {frame.name}" if frame else None,
            "traceback_tail": "".join(traceback.format_exception(exc))[-4000:],
        }


def make_steps(module, count: int):
    make = getattr(module, "make_inputs", None)
    example = module.example_inputs

    def inputs(i: int):
        if make is not None:
            return tuple(make(i))
        return tuple(example() if callable(example) else example)

    return [inputs(i) for i in range(count)]


def mark(inputs, dims: dict | None):
    for index, ds in (dims or {}).items():
        t = inputs[int(index)]
        if isinstance(t, torch.Tensor):
            torch._dynamo.mark_dynamic(t, list(ds))
    return inputs


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def run_steps(fn, module, steps, device, dims, log):
    train = getattr(module, "train_step", None)
    for i, inputs in enumerate(steps):
        inputs = mark(to(inputs, device), dims)
        t0 = time.perf_counter()
        if train is not None:
            train(fn, inputs)
        else:
            with torch.no_grad():
                fn(*inputs)
        sync(device)
        log.append({"step": i, "inputs": shapes(inputs), "seconds": round(time.perf_counter() - t0, 3)})
        print(f"[runner] step {i} {log[-1]['seconds']} s", flush=True)


def compile_facts() -> dict:
    from torch._dynamo.utils import counters

    out: dict = {"counters": {k: dict(v) for k, v in counters.items() if v}}
    try:
        from torch._dynamo.utils import get_compilation_metrics

        rows = []
        for m in get_compilation_metrics():
            d = dataclasses.asdict(m) if dataclasses.is_dataclass(m) else dict(vars(m))
            rows.append({k: jsonable(d.get(k)) for k in METRIC_FIELDS if d.get(k) not in (None, "", [], {})})
        out["compilation_metrics"] = rows
    except Exception as exc:  # older or newer torch without it
        out["compilation_metrics_error"] = repr(exc)
    breaks = out["counters"].get("graph_break", {})
    out["graph_break_reasons"] = [{"reason": k[:600], "count": v} for k, v in breaks.items()]
    out["unique_graphs"] = out["counters"].get("stats", {}).get("unique_graphs")
    return out


class ExplainProxy:
    """Stands in for the compiled model inside the file's train_step: each call is explained
    (Dynamo traces it into graphs, nothing compiled), then run in eager so the step goes on."""

    def __init__(self, model) -> None:
        self.model = model
        self.calls: list[dict] = []

    def __call__(self, *args, **kwargs):
        t0 = time.perf_counter()
        try:
            ex = torch._dynamo.explain(self.model)(*args, **kwargs)
            self.calls.append(explain_record(ex, time.perf_counter() - t0))
        except Exception as exc:
            self.calls.append({"exception": Crash.record(exc), "seconds": round(time.perf_counter() - t0, 2)})
            raise
        return self.model(*args, **kwargs)


def _frame(f) -> str:
    return f"{getattr(f, 'filename', '?')}:{getattr(f, 'lineno', '?')} in {getattr(f, 'name', '?')}"


def explain_record(ex, seconds: float) -> dict:
    reasons = []
    for r in ex.break_reasons or []:
        stack = list(getattr(r, "user_stack", None) or [])
        reasons.append({
            "reason": str(getattr(r, "reason", r))[:800],
            "user_frame": _frame(stack[-1]) if stack else None,
            "user_stack": [_frame(f) for f in stack[-6:]],
        })
    ops_per_graph = [[str(getattr(op, "__name__", op)) for op in ops] for ops in (ex.ops_per_graph or [])]
    top = collections.Counter(op for ops in ops_per_graph for op in ops).most_common(25)
    return {
        "graph_count": ex.graph_count,
        "graph_break_count": ex.graph_break_count,
        "break_reason_count": len(reasons),
        "break_reasons": reasons[:60],
        "op_count": ex.op_count,
        "ops_per_graph_count": [len(ops) for ops in ops_per_graph],
        "nodes_per_graph": [len(g.graph.nodes) for g in (ex.graphs or [])],
        "top_ops": dict(top),
        "seconds": round(seconds, 2),
    }


def explain(module, model, device, dims, result) -> None:
    if (getattr(module, "compile_options", None) or {}).get("dynamic") is True:
        torch._dynamo.config.assume_static_by_default = False  # as dynamic=True compiles it
    proxy = ExplainProxy(model)
    inputs = mark(to(make_steps(module, 1)[0], device), dims)
    train = getattr(module, "train_step", None)
    try:
        if train is not None:
            train(proxy, inputs)
        else:
            with torch.no_grad():
                proxy(*inputs)
    except Exception as exc:
        result["exception"] = Crash.record(exc)
    calls = proxy.calls
    result["explain_calls"] = calls
    ok = [c for c in calls if "graph_count" in c]
    result["graph_count"] = sum(c["graph_count"] for c in ok)
    result["graph_break_count"] = sum(c["graph_break_count"] for c in ok)
    result["break_reason_count"] = sum(c["break_reason_count"] for c in ok)
    result["op_count"] = sum(c["op_count"] for c in ok)
    result["break_reasons"] = [r for c in ok for r in c["break_reasons"]][:60]
    result["note"] = ("explain() of the first step's call(s) of the model; each call resets Dynamo, so "
                      "recompiles are not in it (see logged_run.compilation_metrics)")


def setup_dist(kind: str, device: str):
    import torch.distributed as dist

    rank = int(os.environ["RANK"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    if device.startswith("cuda"):
        torch.cuda.set_device(local)
        device = f"cuda:{local}"
    dist.init_process_group("nccl" if device.startswith("cuda") else "gloo")
    return rank, device


def wrap_dist(kind: str, model, device: str, module):
    if kind == "ddp":
        from torch.nn.parallel import DistributedDataParallel

        ids = [torch.device(device).index] if device.startswith("cuda") else None
        return DistributedDataParallel(model, device_ids=ids), "DistributedDataParallel"
    try:
        from torch.distributed.fsdp import fully_shard  # FSDP2
    except ImportError:
        fully_shard = None
    if fully_shard is not None:
        for block in getattr(module, "fsdp_blocks", lambda m: [])(model):
            fully_shard(block)
        fully_shard(model)
        return model, "FSDP2 fully_shard (per block, then root)"
    from torch.distributed.fsdp import FullyShardedDataParallel

    wrapped = FullyShardedDataParallel(model, use_orig_params=True)
    return wrapped, "FSDP1 FullyShardedDataParallel(use_orig_params=True)"


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("model")
    p.add_argument("--device", default="cuda")
    p.add_argument("--result", required=True)
    p.add_argument("--scenario", default="steps", choices=["steps", "twice", "explain"])
    p.add_argument("--dist", choices=["ddp", "fsdp"])
    args = p.parse_args()

    device, rank = args.device, 0
    if args.dist:
        rank, device = setup_dist(args.dist, device)
    result_path = args.result if not args.dist else args.result.replace(".json", f".rank{rank}.json")
    result: dict = {"scenario": args.scenario, "rank": rank, "status": "started", "pid": os.getpid(),
                    "torch_trace": os.environ.get("TORCH_TRACE")}
    t_start = time.perf_counter()

    def write() -> None:
        result["seconds"] = round(time.perf_counter() - t_start, 2)
        ours = ("compiler_core", "explorer")
        result["compilescope_imported"] = any(m.startswith(ours) for m in sys.modules)
        result["versions"] = versions()
        result.update(device_facts(device))
        Path(result_path).write_text(json.dumps(jsonable(result), indent=1))

    write()
    failure: BaseException | None = None
    try:
        module = load(args.model)
        model = module.model
        result["corpus_facts"] = jsonable(getattr(module, "corpus_facts", {}) or {})
        if isinstance(model, torch.nn.Module):
            model = model.to(device)
        dims = getattr(module, "dynamic_dims", None)
        if args.scenario == "explain":
            explain(module, model, device, dims, result)
            result["status"] = "ok" if "exception" not in result else "explain raised"
            write()
            return 0
        options = dict(getattr(module, "compile_options", {}) or {})
        if args.dist:
            model, how = wrap_dist(args.dist, model, device, module)
            result["wrapper"] = how
        result["compile_options"] = jsonable(options)
        count = int(getattr(module, "corpus_steps", 2))
        steps = make_steps(module, count)
        log: list = []
        result["steps"] = log
        rounds = 2 if args.scenario == "twice" else 1
        for r in range(rounds):
            if r:
                result["compile_facts_before_reset"] = compile_facts()
                torch._dynamo.reset()
                print("[runner] torch._dynamo.reset(); compiling again", flush=True)
            compiled = torch.compile(model, **options)
            run_steps(compiled, module, steps, device, dims, log)
        result["status"] = "ok"
    except BaseException as exc:  # recorded, then re-raised: the exit a user sees
        failure = exc
        result["status"] = "crashed"
        result["exception"] = Crash.record(exc)
    try:
        result["logged_run"] = compile_facts()
    except Exception as exc:
        result["logged_run"] = {"error": repr(exc)}
    write()
    if args.dist:
        import torch.distributed as dist

        if failure is None and dist.is_initialized():
            dist.destroy_process_group()
    if failure is not None:
        raise failure
    return 0


if __name__ == "__main__":
    sys.exit(main())
