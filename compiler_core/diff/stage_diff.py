"""One matched pair of compiles, stage by stage: Dynamo (graph, breaks, guards, why it
recompiled), AOT (forward/backward graphs, saved tensors, recomputation), Inductor (post-grad
graphs, kernels, CUDA graphs) and the compile time each stage took. Kernels whose op moved between
generated code and an extern call ("refused") are kernel_swaps.py's.

Guards are compared with Dynamo's per-compile numbering of the globals it installs blanked
(`___builtins_dict___0` in one compile is `___2` in the next: most of a raw diff is that alone),
as the Dynamo pane's recompile diff does.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence

from compiler_core.diff.compile_match import frame_key
from compiler_core.diff.diff_result import BreakFact, Change, CompileDiff, GraphDiff, KernelDiff, SavedDiff
from compiler_core.diff.graph_diff import graph_diff, op_name
from compiler_core.diff.kernel_swaps import kernel_swaps
from compiler_core.overview.stage_facts import compile_total
from compiler_core.queries.break_ranking import break_key
from compiler_core.queries.summary import aot_saved_bytes
from compiler_core.session.model import AotInfo, Compile, CudaGraphInfo, GraphBreak, InductorOutput, Kernel
from compiler_core.session.refs import Ref

STAGES = ("dynamo", "aot", "inductor", "codegen", "backend", "backward")
_RENUMBERED = re.compile(r"___\d+\b")
_OBJECT_ID = re.compile(r"(?<![0-9])\d{9,}(?![0-9])")  # an id(): an address, new each run
# the repr torch appends to an identity guard: `<class 'module'>` in one version,
# `<module 'torch.fx' from '/opt/...'>` in another; the guard is the same
_TYPE_NOTE = re.compile(r", type=<.*>$")
_ID_CHECK = re.compile(r"(___check_(?:obj|type)_id\(.*, )\d+\)")  # the id an identity guard compares
_RUN_MODULE = re.compile(r"\bcompilescope_user_[0-9a-f]{8}\b")  # a capture's model-file module
_KERNEL_INDEX = re.compile(r"(_\d+|:\d+)$")
_BACKEND = re.compile(r"^(triton_(poi|red|per|tem|mm|bmm)_|cpp_|cuda_|halide_)")


KernelTimes = tuple[dict[str, float], dict[str, float]]


def compile_diff(a: Compile, b: Compile, us: KernelTimes = ({}, {})) -> CompileDiff:
    """`us` is each side's profiled µs per step by encoded kernel ref (a mode's `time_by_ref`;
    empty where not profiled)."""
    removed_breaks, added_breaks = break_changes(a.graph_breaks, b.graph_breaks)
    guards_removed, guards_added = guard_changes(a, b)
    return CompileDiff(
        before=a.compile_id,
        after=b.compile_id,
        frame=frame_key(b).shown(),
        rank=b.rank,
        run=b.run,
        status=(str(a.status), str(b.status)),
        graphs=tuple(g for g in _graphs(a, b) if g.nodes_before or g.nodes_after),
        breaks_removed=removed_breaks,
        breaks_added=added_breaks,
        guards_removed=guards_removed,
        guards_added=guards_added,
        guards=Change("guards", len(a.guards), len(b.guards)),
        recompile_before=a.recompile_reasons[0].strip() if a.recompile_reasons else "",
        recompile_after=b.recompile_reasons[0].strip() if b.recompile_reasons else "",
        saved=saved_diff(a.aot, b.aot) if a.aot is not None or b.aot is not None else None,
        kernels=tuple(_kernel_diffs(a, b, us)),
        compile_s=compile_times(a, b),
    )


def _graphs(a: Compile, b: Compile) -> Iterable[GraphDiff]:
    yield graph_diff("dynamo", a.dynamo_graph, b.dynamo_graph)
    for part in ("forward", "backward", "inference"):
        ga = getattr(a.aot, part) if a.aot is not None else None
        gb = getattr(b.aot, part) if b.aot is not None else None
        yield graph_diff(f"aot_{part}", ga, gb)
    outs_a, outs_b = _outputs(a), _outputs(b)
    for part in _partitions(outs_a, outs_b):
        oa, ob = outs_a.get(part), outs_b.get(part)
        yield graph_diff(f"post_grad_{part}", oa.post_grad if oa else None, ob.post_grad if ob else None)


def _outputs(c: Compile) -> dict[str, InductorOutput]:
    return {str(o.graph): o for o in c.inductor}


def _partitions(a: dict[str, InductorOutput], b: dict[str, InductorOutput]) -> list[str]:
    return list(a) + [p for p in b if p not in a]


def break_fact(brk: GraphBreak, count: int = 1) -> BreakFact:
    loc = brk.location
    return BreakFact(reason=brk.reason, file=loc.file if loc else "", line=loc.line if loc else 0,
                     code=loc.code if loc else "", gb_code=brk.gb_code, count=count, hints=brk.hints)


def break_identity(brk: GraphBreak) -> tuple[str, str, str, str]:
    """A break's cause and place, free of line numbers where the code text is known (an edit
    above the line moves it without changing the break)."""
    gb, reason, file, line = break_key(brk)
    code = brk.location.code.strip() if brk.location and brk.location.code else str(line)
    return (gb, reason, os.path.basename(file), code)


def break_changes(a: Iterable[GraphBreak], b: Iterable[GraphBreak]) -> tuple[tuple[BreakFact, ...], ...]:
    """(breaks only before, breaks only after), each distinct cause once with its count."""
    ca: dict[tuple[str, str, str, str], list[GraphBreak]] = {}
    cb: dict[tuple[str, str, str, str], list[GraphBreak]] = {}
    for brk in a:
        ca.setdefault(break_identity(brk), []).append(brk)
    for brk in b:
        cb.setdefault(break_identity(brk), []).append(brk)
    removed = tuple(break_fact(v[0], len(v)) for k, v in ca.items() if k not in cb)
    added = tuple(break_fact(v[0], len(v)) for k, v in cb.items() if k not in ca)
    return removed, added


def guard_key(code: str) -> str:
    """A guard's text without what varies between compiles and runs (renumbered globals,
    addresses, the type repr, a capture's module name): two guards with one key are one."""
    code = _ID_CHECK.sub(r"\1#id)", _TYPE_NOTE.sub("", code))
    return _RUN_MODULE.sub("compilescope_user", _OBJECT_ID.sub("#id", _RENUMBERED.sub("___#", code)))


def guard_changes(a: Compile, b: Compile) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Guard lines that no longer hold after, and those that are new."""
    keys_a = {guard_key(g.code) for g in a.guards}
    keys_b = {guard_key(g.code) for g in b.guards}
    return (tuple(g.code for g in a.guards if guard_key(g.code) not in keys_b),
            tuple(g.code for g in b.guards if guard_key(g.code) not in keys_a))  # fmt: skip


def _recomputed_ops(aot: AotInfo | None) -> list[str]:
    if aot is None or aot.forward is None:
        return list(aot.recomputed) if aot is not None else []
    out = []
    for name in aot.recomputed:
        node = aot.forward.node(name)
        out.append(op_name(node) if node is not None else name)
    return out


def saved_diff(a: AotInfo | None, b: AotInfo | None) -> SavedDiff:
    """Saved tensors are told apart by the op that produced them (names are counters)."""
    sa = [_saved_label(a, t.producer or t.name) for t in a.saved_tensors] if a else []
    sb = [_saved_label(b, t.producer or t.name) for t in b.saved_tensors] if b else []
    ra, rb = _recomputed_ops(a), _recomputed_ops(b)
    return SavedDiff(
        tensors=Change("saved tensors", len(sa), len(sb)),
        bytes=Change("saved bytes", aot_saved_bytes(a), aot_saved_bytes(b)),
        recomputed=Change("recomputed ops", len(ra), len(rb)),
        recomputed_bytes=Change("recomputed bytes", a.recomputed_bytes if a else 0,
                                b.recomputed_bytes if b else 0),
        removed=tuple(_minus(sa, sb)),
        added=tuple(_minus(sb, sa)),
        recomputed_removed=tuple(_minus(ra, rb)),
        recomputed_added=tuple(_minus(rb, ra)),
    )


def _saved_label(aot: AotInfo | None, name: str) -> str:
    """`mul (mul_tensor)`: the producing op, then the tensor's own name."""
    node = aot.forward.node(name) if aot is not None and aot.forward is not None else None
    if node is None or node.op == "placeholder":
        return name
    return f"{op_name(node)} ({name})"


def _minus(a: list[str], b: list[str]) -> list[str]:
    """Items of `a` not in `b`, as multisets (keeps `a`'s order); op names compare without the
    tensor name in brackets."""
    left: dict[str, int] = {}
    for x in b:
        left[_bare(x)] = left.get(_bare(x), 0) + 1
    out = []
    for x in a:
        if left.get(_bare(x), 0):
            left[_bare(x)] -= 1
        else:
            out.append(x)
    return out


def _bare(label: str) -> str:
    return label.split(" (", 1)[0]


def fused_ops(name: str) -> str:
    """A kernel's family without its backend's prefix (`triton_poi_`, `cpp_`): what one fusion
    is called on either device, so a GPU log and a CPU log of one model pair their kernels."""
    return _BACKEND.sub("", name)


def _unpaired(ka: Sequence[Kernel], kb: Sequence[Kernel]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Kernels of each side left after pairing in order, by family first (the third `addmm`
    call of three after two before is the one added), then by fused ops alone."""
    names_a = [k.name for k in ka]
    names_b = [k.name for k in kb]
    for key in (lambda n: _KERNEL_INDEX.sub("", n), lambda n: fused_ops(_KERNEL_INDEX.sub("", n))):
        left: dict[str, list[str]] = {}
        for n in names_b:
            left.setdefault(key(n), []).append(n)
        removed = []
        for n in names_a:
            mine = left.get(key(n))
            if mine:
                mine.pop(0)
            else:
                removed.append(n)
        names_a, names_b = removed, [n for names in left.values() for n in names]
    kept_b = set(names_b)
    return tuple(names_a), tuple(n for n in (k.name for k in kb) if n in kept_b)


def _cudagraph(info: CudaGraphInfo | None) -> str:
    if info is None:
        return ""
    return "captured" if info.captured else f"skipped: {info.skip_reason}".rstrip(": ")


def _kernel_diffs(a: Compile, b: Compile, us: KernelTimes) -> Iterable[KernelDiff]:
    outs_a, outs_b = _outputs(a), _outputs(b)
    for part in _partitions(outs_a, outs_b):
        oa, ob = outs_a.get(part), outs_b.get(part)
        ka = oa.kernels if oa else ()
        kb = ob.kernels if ob else ()
        removed, added = _unpaired(ka, kb)
        gone, new = set(removed), set(added)
        yield KernelDiff(
            partition=part,
            kernels=Change("kernels", _count(ka, generated=True), _count(kb, generated=True)),
            launches=Change("launches", _launches(ka), _launches(kb)),
            extern_calls=Change("extern calls", _count(ka, generated=False), _count(kb, generated=False)),
            removed=removed,
            added=added,
            us_before=_times(a, part, removed, us[0]),
            us_after=_times(b, part, added, us[1]),
            cudagraph_before=_cudagraph(oa.cudagraph if oa else None),
            cudagraph_after=_cudagraph(ob.cudagraph if ob else None),
            swaps=kernel_swaps([k for k in ka if k.name in gone], [k for k in kb if k.name in new]),
        )


def _times(c: Compile, part: str, names: Iterable[str], us: dict[str, float]) -> dict[str, float]:
    if not us:
        return {}
    keys = {n: Ref.kernel(c.compile_id, part, n, c.rank).encode() for n in names}
    return {n: us[k] for n, k in keys.items() if k in us}


def _count(kernels: Iterable[Kernel], generated: bool) -> int:
    return sum(1 for k in kernels if (k.language != "extern") == generated)


def _launches(kernels: Iterable[Kernel]) -> int | None:
    mine = [k for k in kernels if k.language != "extern"]
    if any(k.launches <= 0 for k in mine):
        return None
    return sum(k.launches for k in mine)


def timed_total(c: Compile) -> float | None:
    """Compile seconds as the Overview counts them (the frame's compile plus its backward's,
    compiled at its first call); None where neither was timed."""
    return compile_total(c) if c.metrics.total_s is not None or "backward" in c.metrics.stage_s else None


def compile_times(a: Compile, b: Compile) -> tuple[Change, ...]:
    """Total seconds, then each stage either side timed, in pipeline order."""
    ma, mb = a.metrics, b.metrics
    stages = [s for s in STAGES if s in ma.stage_s or s in mb.stage_s]
    stages += sorted((set(ma.stage_s) | set(mb.stage_s)) - set(stages))
    return (Change("total", timed_total(a), timed_total(b)),
            *(Change(s, ma.stage_s.get(s), mb.stage_s.get(s)) for s in stages))  # fmt: skip
