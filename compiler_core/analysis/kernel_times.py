"""Join a mode's profiled kernel times to the session: kernels → post-grad nodes → source lines.

The run phase profiles a few steps of each mode (timeline/kernel_profile.py) and learns, per
compiled graph it saw called, which kernel names ran in it and how long each kernel or extern
call took. Here each such graph is matched to the session's InductorOutput with the most kernel
names in common (ties broken by Dynamo compile id and forward/backward), then:

- an Inductor kernel's time goes to that output's kernel of the same name;
- an extern call (op `mm`, n-th in its graph call) to the output's n-th extern kernel of that op
  (`extern_kernels.mm:N`, `torch.ops.aten.mm.default:N`), in the order the output code calls them;
- a device kernel replayed in a CUDA graph that is no Inductor kernel (a GEMM, cuDNN attention:
  no ATen scope survives the replay) to the extern calls that `call()` makes between the same two
  Inductor kernel launches: one to one, in order, when the counts agree; else split evenly;
- a kernel's time is split evenly among the post-grad nodes it fused (an extern's goes to its own
  node), and a node's share evenly among the source lines upstream of it in the link index.

So the per-line and per-node figures add up to the per-kernel ones. Times are µs per step and
are stored once in `ModeStats.time_by_ref` (encoded Ref -> µs), which the CLI and panes read.
The session's kernels come from the capture's compile, the profile from the run phase's fresh
compile of each mode: kernel names are deterministic for the same graph, so they match for
default and reduce-overhead; a kernel a mode made differently (max-autotune's templates) stays
unjoined and is still listed in `RuntimeProfile.kernels`.
"""

from __future__ import annotations

from collections import defaultdict

from compiler_core.session.links import LinkIndex
from compiler_core.session.model import Compile, InductorOutput, Kernel, RuntimeProfile, Session
from compiler_core.session.refs import Ref, RefKind
from compiler_core.trace.output_code import parse_output_code, split_extern_name

Output = tuple[Compile, InductorOutput]


def extern_op(kernel_name: str) -> tuple[str, int] | None:
    """(`mm`, 3) for `extern_kernels.mm:3` or `torch.ops.aten.mm.default:3`; None otherwise."""
    split = split_extern_name(kernel_name)
    if split is None:
        return None
    base, number = split
    parts = base.split(".")
    if parts[-1] in ("default", "out", "Tensor") and len(parts) > 1:
        parts = parts[:-1]
    return parts[-1], number


def join_runtime(session: Session, profile: RuntimeProfile,
                 index: LinkIndex | None = None) -> dict[str, float]:
    """Encoded Ref (kernel, post-grad node, source line) -> µs per step. `index`: the session's
    link index, when the caller joins several modes (one index, its walks cached, for all)."""
    index = LinkIndex(session.links) if index is None else index
    outputs = [(c, out) for c in session.compiles for out in c.inductor]
    matched = {call.index: _match(call.kernels, call.region, call.backward, outputs)
               for call in profile.graph_calls}
    out: dict[str, float] = defaultdict(float)
    gap_sizes: dict[tuple[int, int], int] = defaultdict(int)
    for kt in profile.kernels:
        if kt.kind == "graph" and kt.gap >= 0:
            gap_sizes[(kt.call, kt.gap)] = max(gap_sizes[(kt.call, kt.gap)], kt.occurrence)
    gaps: dict[int, list[list[Kernel]]] = {}
    for kt in profile.kernels:
        target = matched.get(kt.call)
        if target is None:
            continue
        compile_, output = target
        if kt.kind == "graph":
            if kt.gap < 0:
                continue
            if id(output) not in gaps:
                gaps[id(output)] = launch_gaps(output)
            found = gaps[id(output)]
            candidates = found[kt.gap] if kt.gap < len(found) else []
            if len(candidates) == gap_sizes[(kt.call, kt.gap)]:
                candidates = candidates[kt.occurrence - 1:kt.occurrence]
            for candidate in candidates:
                _add(out, compile_, output, candidate, kt.us_per_step / len(candidates), index)
            continue
        if kt.kind not in ("kernel", "extern"):
            continue
        kernel = _kernel(output, kt.name, kt.kind, kt.occurrence)
        if kernel is not None:
            _add(out, compile_, output, kernel, kt.us_per_step, index)
    return dict(out)


def _add(out: dict[str, float], compile_: Compile, output: InductorOutput, kernel: Kernel,
         us: float, index: LinkIndex) -> None:
    """`us` on the kernel, split evenly over its nodes, each node's share over its source lines."""
    kref = Ref.kernel(compile_.compile_id, output.graph, kernel.name, compile_.rank)
    out[kref.encode()] += us
    nodes = kernel.fused_nodes[:1] if kernel.language == "extern" else kernel.fused_nodes
    for node in nodes:
        share = us / len(nodes)
        nref = Ref.post_grad_node(compile_.compile_id, output.graph, node, compile_.rank)
        out[nref.encode()] += share
        lines = index.upstream(nref, RefKind.SOURCE_LINE)
        for line in lines:
            out[line.encode()] += share / len(lines)


# extern calls that launch no device kernel (views and reinterpretations of a buffer)
_NO_KERNEL = frozenset({"reinterpret_tensor", "as_strided", "view", "alias", "_reshape_alias",
                        "expand", "permute", "t", "transpose", "unsqueeze", "squeeze", "select",
                        "slice", "_unsafe_view", "set_"})


def launch_gaps(output: InductorOutput) -> list[list[Kernel]]:
    """The extern calls of `output`'s `call()` grouped by how many Inductor kernels it launched
    before each: `gaps[n]` are the externs between the n-th and the (n+1)-th kernel launch, in
    call order. The launches come from the one `call()` walker (trace/output_code.py)."""
    launches = [line for pk in parse_output_code(output.output_code) if pk.language != "extern"
                for line, _ in pk.calls]
    externs: list[tuple[int, Kernel | None]] = [(k.output_code_line, k) for k in output.kernels
               if k.language == "extern" and k.output_code_line is not None
               and (extern_op(k.name) or ("", 0))[0] not in _NO_KERNEL]
    events = sorted(externs + [(line, None) for line in launches], key=lambda e: e[0])
    gaps: list[list[Kernel]] = [[]]
    for _, kernel in events:
        if kernel is None:
            gaps.append([])
        else:
            gaps[-1].append(kernel)
    return gaps


def _match(kernels: tuple[str, ...], region: str, backward: bool, outputs: list[Output]) -> Output | None:
    names = set(kernels)

    def score(o: Output) -> tuple[int, int, int]:
        c, out = o
        common = len(names & {k.name for k in out.kernels})
        same_part = (out.graph == "backward") == backward
        return common, int(bool(region) and c.compile_id == region), int(same_part)

    if not outputs:
        return None
    best = max(outputs, key=score)
    common, same_region, same_part = score(best)
    if names and common == 0:
        return None
    if not names and not (same_region and same_part):
        return None
    return best


def _kernel(output: InductorOutput, name: str, kind: str, occurrence: int) -> Kernel | None:
    if kind == "kernel":
        return next((k for k in output.kernels if k.name == name), None)
    for k in output.kernels:
        if k.language == "extern" and extern_op(k.name) == (name, occurrence):
            return k
    return None
