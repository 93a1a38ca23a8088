"""Where a mode's step time goes: a few steps under torch.profiler, per kernel, per step.

Runs after a mode's timed blocks (never during them: the profiler slows every op down). What
it reads is the profiler's public event tree (`prof.events()`): CPU scopes with their children
and the device kernels each scope launched. Inductor and Dynamo name their scopes:

- `Torch-Compiled Region: 0/0` around a compiled frame (its compile id), `CompiledFunctionBackward`
  around a compiled backward, `## Call CompiledFxGraph <key> ##` around each compiled graph call;
- inside a graph call, one scope per kernel: Triton kernels' launcher opens one named after the
  kernel on GPU, and C++ kernels built with `cpp.enable_kernel_profile` open `graph_<n>_<kernel>`
  on CPU; extern calls (mm, sdpa, convolution...) are ordinary `aten::` ops there.

So each kernel's time lands on its name, each extern call on (op, n-th occurrence in its graph
call), and ops outside compiled graphs (eager) on their ATen name. On CUDA a time is the device
time of the kernels a scope launched; kernels replayed from a CUDA graph are attributed to the
scope that launched the graph, by their own names; a replayed kernel that is no Inductor kernel
(a cuBLAS GEMM, cuDNN attention) keeps its place in the graph call's launch order instead of an
ATen scope. `analysis/kernel_times.py` joins the result to a session's kernels, post-grad nodes and
source lines.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from compiler_core.session.model import GraphCall, KernelTime, RuntimeProfile

CPU_KERNEL_PROFILE = {"cpp.enable_kernel_profile": True}
LAUNCH_CALLS = frozenset({
    "cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx",
    "cudaLaunchCooperativeKernel", "cudaGraphLaunch",
})
GRAPH_CALL = "## Call CompiledFxGraph"
REGION = "Torch-Compiled Region: "
BACKWARD = "CompiledFunctionBackward"
_KERNEL_SCOPE = re.compile(r"^(?:graph_\d+_)?((?:triton|cpp)_\w+)$")


def kernel_name(scope: str) -> str | None:
    """The Inductor kernel a profiler scope stands for (`graph_0_cpp_fused_x_0` -> `cpp_fused_x_0`)."""
    m = _KERNEL_SCOPE.match(scope)
    return m.group(1) if m else None


def profile_steps(step: Callable[[], Any], device: str, steps: int = 3) -> RuntimeProfile:
    """Run `step` `steps` times under torch.profiler and summarise per step."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    cuda = device.startswith("cuda")
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    if cuda:
        torch.cuda.synchronize()
    with profile(activities=activities) as prof:
        for _ in range(steps):
            step()
        if cuda:
            torch.cuda.synchronize()
    return summarize(prof.events(), steps, device)


def summarize(events: Iterable[Any], steps: int, device: str) -> RuntimeProfile:
    """A RuntimeProfile from profiler FunctionEvents (any object with their attributes)."""
    cuda = device.startswith("cuda")
    cpu = [e for e in events if _is_cpu(e)]
    calls = sorted((e for e in cpu if e.name.startswith(GRAPH_CALL)), key=_start)
    graphs = list(dict.fromkeys(e.name for e in calls))  # one entry per compiled graph
    call_index = {id(e): graphs.index(e.name) for e in calls}
    first_call = {graphs.index(e.name): e for e in reversed(calls)}
    acc = _Accumulator()
    seen: dict[int, list[str]] = defaultdict(list)
    if cuda:
        # graph replays: kernels hang on the launch call or on the innermost op around it
        graph_owners = {id(e) for e in cpu if e.name == "cudaGraphLaunch"}
        graph_owners |= {id(e.cpu_parent) for e in cpu if e.name == "cudaGraphLaunch" and e.cpu_parent}
        order = _LaunchOrder()
        for owner in sorted(cpu, key=_start):
            for k in owner.kernels:
                _attribute_device(acc, owner, k, call_index, seen, id(owner) in graph_owners, order)
    else:
        places = _cpu_places(cpu, call_index)
        for e in cpu:
            _attribute_cpu(acc, e, call_index, seen, places)
    graph_calls = tuple(
        GraphCall(i, region=_region(c), backward=_has_ancestor(c, BACKWARD),
                  kernels=tuple(dict.fromkeys(seen.get(i, []))))
        for i, c in sorted(first_call.items()))
    device_events = [e for e in events if not _is_cpu(e)]
    launches = sum(1 for e in cpu if e.name in LAUNCH_CALLS)
    kernels = sum(1 for e in device_events if not e.name.startswith(("Memcpy", "Memset")))
    busy = _union_us(device_events) if cuda else acc.total_us()
    return RuntimeProfile(
        steps=steps, device=device, kernels=acc.finish(steps), graph_calls=graph_calls,
        busy_us_per_step=busy / steps if steps else None,
        cudagraph_us_per_step=acc.graph_us / steps if cuda and steps else None,
        launches_per_step=round(launches / steps) if cuda and steps else None,
        kernels_per_step=round(kernels / steps) if cuda and steps else None,
    )


_Key = tuple[str, str, int, int, bool, int]  # name, kind, call, occurrence, in CUDA graph, gap


class _Accumulator:
    def __init__(self) -> None:
        self.us: dict[_Key, float] = defaultdict(float)
        self.count: dict[_Key, int] = defaultdict(int)
        self.graph_us = 0.0

    def add(self, key: tuple[str, str, int, int, bool], us: float, gap: int = -1) -> None:
        full = (*key, gap)
        self.us[full] += us
        self.count[full] += 1
        if key[4]:
            self.graph_us += us

    def total_us(self) -> float:
        return sum(self.us.values())

    def finish(self, steps: int) -> tuple[KernelTime, ...]:
        n = max(steps, 1)
        out = []
        for key, us in self.us.items():
            name, kind, call, occ, cg, gap = key
            out.append(KernelTime(name, kind, call, occ, us / n, self.count[key] / n, cg, gap))
        return tuple(sorted(out, key=lambda k: -k.us_per_step))


class _LaunchOrder:
    """Where each device kernel sits in its graph call's launch order: how many Inductor kernels
    the call launched before it, and its place among the other kernels since then. Counted per
    call event (one per step), so every step gives the same (gap, place) for the same launch."""

    def __init__(self) -> None:
        self.named: dict[int, int] = defaultdict(int)
        self.since: dict[int, int] = defaultdict(int)

    def named_kernel(self, call_ev: Any) -> None:
        self.named[id(call_ev)] += 1
        self.since[id(call_ev)] = 0

    def other_kernel(self, call_ev: Any) -> tuple[int, int]:
        self.since[id(call_ev)] += 1
        return self.named[id(call_ev)], self.since[id(call_ev)]


def _cpu_places(cpu: list[Any], call_index: dict[int, int]) -> dict[int, int]:
    """Each extern op's `gap` in its graph call (Inductor kernels run before it), as on CUDA:
    on CPU its ATen scope already names it, so this only records the launch order the CUDA-graph
    join relies on, and lets a CPU run check that join against the scopes."""
    out: dict[int, int] = {}
    for e in cpu:
        if id(e) not in call_index:
            continue
        named = 0
        for child in sorted(e.cpu_children, key=_start):
            if kernel_name(child.name) is not None:
                named += 1
            elif child.name.startswith("aten::"):
                out[id(child)] = named
    return out


def _attribute_cpu(acc: _Accumulator, e: Any, call_index: dict[int, int],
                   seen: dict[int, list[str]], places: dict[int, int]) -> None:
    """CPU: a graph call's direct children are its kernels and extern ops; a root op is eager."""
    parent = e.cpu_parent
    if parent is not None and id(parent) in call_index:
        call = call_index[id(parent)]
        name = kernel_name(e.name)
        if name is not None:
            seen[call].append(name)
            acc.add((name, "kernel", call, 1, False), e.cpu_time_total)
        elif e.name.startswith("aten::"):
            op = e.name[len("aten::"):]
            acc.add((op, "extern", call, _occurrence(e, parent), False), e.cpu_time_total,
                    places.get(id(e), -1))
    elif e.name.startswith("aten::") and not any(
            a.name.startswith(("aten::", GRAPH_CALL)) for a in _chain(parent)):
        acc.add((e.name[len("aten::"):], "eager", -1, 1, False), e.cpu_time_total)


def _attribute_device(acc: _Accumulator, owner: Any, k: Any, call_index: dict[int, int],
                      seen: dict[int, list[str]], in_graph: bool, order: _LaunchOrder) -> None:
    """CUDA: a device kernel belongs to the scope chain of the CPU event that launched it."""
    if k.name.startswith(("Memcpy", "Memset")):
        return
    chain = _chain(owner)
    call_ev = next((e for e in chain if id(e) in call_index), None)
    call = call_index[id(call_ev)] if call_ev is not None else -1
    name = kernel_name(k.name) or next((kernel_name(e.name) for e in chain if kernel_name(e.name)), None)
    us = float(k.duration)
    if name is not None:
        if call >= 0:
            seen[call].append(name)
            order.named_kernel(call_ev)
        acc.add((name, "kernel", call, 1, in_graph), us)
        return
    if in_graph:
        gap, place = order.other_kernel(call_ev) if call_ev is not None else (-1, 1)
        acc.add((k.name, "graph", call, place, True), us, gap)
        return
    if call_ev is not None:
        top = next((e for e in chain if e.cpu_parent is call_ev), None)
        if top is not None and top.name.startswith("aten::"):
            acc.add((top.name[len("aten::"):], "extern", call, _occurrence(top, call_ev), False), us)
            return
    root = next((e for e in reversed(chain) if e.name.startswith("aten::")), chain[-1])
    acc.add((root.name.removeprefix("aten::"), "eager", -1, 1, False), us)


def _occurrence(op: Any, call: Any) -> int:
    """1 + how many earlier children of the graph call ran the same aten op."""
    n = 1
    for sibling in call.cpu_children:
        if sibling is op:
            return n
        if sibling.name == op.name:
            n += 1
    return n


def _chain(e: Any) -> list[Any]:
    out = []
    while e is not None:
        out.append(e)
        e = e.cpu_parent
    return out


def _has_ancestor(e: Any, name: str) -> bool:
    return any(a.name.startswith(name) for a in _chain(e.cpu_parent))


def _region(call: Any) -> str:
    for a in _chain(call):
        if a.name.startswith(REGION):
            return a.name[len(REGION):].strip()
    return ""


def _is_cpu(e: Any) -> bool:
    return getattr(getattr(e, "device_type", None), "name", "CPU") == "CPU"


def _start(e: Any) -> float:
    return float(e.time_range.start)


def _union_us(device_events: list[Any]) -> float:
    """Total time at least one device event was running (overlaps counted once)."""
    spans = sorted((float(e.time_range.start), float(e.time_range.end)) for e in device_events)
    total, cur_start, cur_end = 0.0, None, None
    for s, t in spans:
        if cur_end is None or s > cur_end:
            if cur_end is not None and cur_start is not None:
                total += cur_end - cur_start
            cur_start, cur_end = s, t
        else:
            cur_end = max(cur_end, t)
    if cur_end is not None and cur_start is not None:
        total += cur_end - cur_start
    return total
