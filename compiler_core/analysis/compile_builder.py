"""Turn one compile's accumulated records into the frozen `Compile`.

Graphs come from the readable text in the log unless a `compilescope_graph` artifact (emitted by
live capture with full node metadata) exists for the same stage: then the richer graph wins but
keeps the logged text. Inductor partitions are named by the output code's `# AOT ID` header,
else by whether the post-grad graph takes `tangents_*` (backward), else by the AOT graphs logged.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from compiler_core.analysis.backward_links import backward_info
from compiler_core.analysis.compile_records import CompileRecords, Partition
from compiler_core.analysis.graph_breaks import merge_wrapped, parse_break, restart_breaks
from compiler_core.analysis.kernel_lines import kernel_marks
from compiler_core.analysis.kernel_nodes import KernelNodes
from compiler_core.analysis.module_paths import graphs_of, with_graphs, with_module_paths
from compiler_core.analysis.parse_memo import ParseMemo
from compiler_core.analysis.saved_tensors import saved_tensors
from compiler_core.analysis.user_crash import crash_text, is_crash_break, user_crash
from compiler_core.analysis.value_bounds import seconds
from compiler_core.session.model import (
    AotInfo,
    Compile,
    CompileMetrics,
    Graph,
    Guard,
    InductorOutput,
    Kernel,
    SavedTensor,
    SourceLoc,
)
from compiler_core.session.vocab import CompileStatus, GraphKind
from compiler_core.session.vocab import Partition as PartitionName
from compiler_core.trace.fx_text import comment_tail_start, parse_graph, parse_graph_closed
from compiler_core.trace.output_code import ParsedKernel, extern_name, parse_output_code

_WORD = re.compile(r"\w+")
_AOT_ID = re.compile(r"# AOT ID: \['[^']*_(forward|backward|inference)'\]")
_GUARD_KIND = re.compile(r"^\|?[\s|]*\+- ([A-Z_]+): (.*)$")
_GUARD_LOC = re.compile(r"#\s*(.*?)\s*#\s*([^\s#]+\.py):(\d+) in (\w+)\s*$")
_GUARD_TAIL = re.compile(r"#\s*([^\s#]+\.py):(\d+) in (\w+)\s*$")


def build_compile(acc: CompileRecords, memo: ParseMemo | None = None) -> Compile:
    """Freeze one compile; `memo` shares parses of payloads that earlier compiles logged too."""
    memo = ParseMemo() if memo is None else memo
    dynamo = _graph(acc, memo, "dynamo", "dynamo")
    aot = _aot(acc, memo)
    inductor = tuple(_partition(acc, memo, p) for p in _named_partitions(acc))
    metrics = _metrics(acc)
    breaks = merge_wrapped(tuple(parse_break(text) for text in acc.breaks)) or restart_breaks(acc.metrics)
    status, failure = _status(acc, metrics, dynamo)
    texts = [*acc.breaks, *acc.errors]  # where the exception is named when the metrics are missing
    acc.crash = user_crash(acc.metrics, breaks, texts) if status == "failed" or breaks else None
    if acc.crash is not None:  # the user's exception, not a break: never counted or ranked as one
        breaks = tuple(b for b in breaks if not is_crash_break(b))
        status, failure = CompileStatus.FAILED, crash_text(acc.crash)
    compiled = Compile(
        compile_id=acc.compile_id,
        rank=acc.rank,
        frame_id=acc.frame_id,
        frame_compile_id=acc.frame_compile_id,
        attempt=acc.attempt,
        code=_code_loc(acc.metrics),
        dynamo_graph=dynamo,
        graph_breaks=breaks,
        guards=memo.get(("guards", acc.guards_text), lambda: _guards(acc))
        if acc.guards_text
        else _guards(acc),
        recompile_reasons=tuple(acc.recompile_reasons),
        metrics=metrics,
        aot=aot,
        inductor=inductor,
        status=status,
        failure=failure,
        artifacts=dict(acc.artifacts),
        run=acc.run,
    )
    # Module paths last: saved tensors and kernels above are keyed by the parsed graphs' identity.
    # Recompiles that logged the same graphs share one derivation (the value keeps the parsed
    # graphs alive, so their ids are not reused during the build).
    graphs = graphs_of(compiled)
    key = ("module_paths", *(id(g) for g in graphs))
    derived = memo.get(key, lambda: (graphs, graphs_of(with_module_paths(compiled))))[1]
    return with_graphs(compiled, derived)


def _graph(acc: CompileRecords, memo: ParseMemo, stage: str, kind: str, name: str = "") -> Graph | None:
    text = acc.graphs.get(stage, "")
    rich = acc.enriched.get(stage)
    if rich is not None:
        return _from_enriched(rich, kind, name, text)
    if not text:
        return None
    return _parsed(memo, text, kind, name)


def _parsed(memo: ParseMemo, text: str, kind: str, name: str) -> Graph:
    return memo.get((text, kind, name), lambda: _parsed_shared(memo, text, kind, name))


def _parsed_shared(memo: ParseMemo, text: str, kind: str, name: str) -> Graph:
    """Texts that differ only in trailing blank or comment lines share one parse: Inductor logs
    the pre-grad graph as the Dynamo graph's text plus `# graph id: N` (2.4k statements of a
    deep model parsed twice). The shared part is parsed once; when that parse is closed
    (fx_text.parse_graph_closed) the tail cannot change the nodes, else `text` is parsed whole."""
    cut = comment_tail_start(text)
    if cut == len(text):
        graph, _ = memo.get(("fx nodes", text), lambda: parse_graph_closed(text, kind, name))
        return Graph(kind=GraphKind(kind), nodes=graph.nodes, text=text, name=name)
    core = text[:cut]
    try:
        graph, closed = memo.get(("fx nodes", core), lambda: parse_graph_closed(core, kind, name))
    except Exception:  # the part alone is malformed (a header closed only in the tail): the whole
        closed = False  # text is parsed as before, and raises as before if it is malformed too
    if not closed:
        return parse_graph(text, kind, name)
    return Graph(kind=GraphKind(kind), nodes=graph.nodes, text=text, name=name)


def _from_enriched(g: Graph, kind: str, name: str, text: str) -> Graph:
    """`g` was decoded (and checked) when its record was routed."""
    return Graph(kind=GraphKind(kind), nodes=g.nodes, text=text or g.text, name=name or g.name)


def _aot(acc: CompileRecords, memo: ParseMemo) -> AotInfo | None:
    joint = _graph(acc, memo, "aot_joint", "aot_joint", "joint")
    fw = _graph(acc, memo, "aot_forward", "aot_forward", "forward")
    bw = _graph(acc, memo, "aot_backward", "aot_backward", "backward")
    inf = _graph(acc, memo, "aot_inference", "aot_inference", "inference")
    if not any((joint, fw, bw, inf)):
        return None
    saved = _saved(memo, fw, bw) if bw is not None else ()
    back = memo.get(("backward", id(fw), id(bw)), lambda: (fw, bw, backward_info(fw, bw)))[2]
    return AotInfo(joint=joint, forward=fw, backward=bw, inference=inf, saved_tensors=saved,
                   recomputed=back.recomputed, backward_of=back.backward_of, backward_via=back.via,
                   recomputed_bytes=back.recomputed_bytes)  # fmt: skip


def _saved(memo: ParseMemo, fw: Graph | None, bw: Graph) -> tuple[SavedTensor, ...]:
    """Keyed by graph identity (memoised graphs are shared); the value keeps both graphs alive so
    an id is never reused for another graph during the build. The backward partners in `_aot`
    are keyed the same way: ranks that logged one training graph share them."""
    return memo.get(("saved", id(fw), id(bw)), lambda: (fw, bw, saved_tensors(fw, bw)))[2]


def _named_partitions(acc: CompileRecords) -> list[Partition]:
    training = "aot_backward" in acc.graphs or "aot_forward" in acc.graphs
    seen_forward = False
    for part in acc.partitions:
        if part.name:
            continue
        m = _AOT_ID.search(part.output_code[:2000])
        if m:
            part.name = m.group(1)
        elif "tangents_" in part.post_grad_text[: part.post_grad_text.find("):") + 1]:
            part.name = "backward"
        elif training:
            part.name = "backward" if seen_forward else "forward"
        else:
            part.name = "inference"
        seen_forward = seen_forward or part.name == "forward"
    return acc.partitions


def _partition(acc: CompileRecords, memo: ParseMemo, part: Partition) -> InductorOutput:
    if part.enriched is not None:
        post = _from_enriched(part.enriched, "post_grad", part.name, part.post_grad_text)
    elif part.post_grad_text:
        post = _parsed(memo, part.post_grad_text, "post_grad", part.name)
    else:
        post = None
    # The pre-grad graph is the forward's (a backward has none): never parse it for a backward.
    pre = None
    if acc.pre_grad_text and part.name != "backward":
        pre = _parsed(memo, acc.pre_grad_text, "pre_grad", part.name)
    kernels = memo.get(_kernels_key(part, post), lambda: (post, tuple(_kernels(part, post))))[1]
    return InductorOutput(
        graph=PartitionName(part.name), post_grad=post, pre_grad=pre, kernels=kernels,
        output_code=part.output_code,
    )


def _kernels_key(part: Partition, post: Graph | None) -> tuple[object, ...]:
    """Kernels depend on the output code, the post-grad node names and the provenance maps."""
    prov = json.dumps([part.provenance, part.kernel_to_post], sort_keys=True) if part.provenance or \
        part.kernel_to_post else ""  # fmt: skip
    return ("kernels", part.output_code, part.name, id(post), prov)


def _kernels(part: Partition, post: Graph | None) -> list[Kernel]:
    if not part.output_code:
        return []
    post_names = {n.name for n in post.nodes} if post is not None else set()
    pre_to_post: dict[str, list[str]] = part.provenance.get("preToPost") or {}
    by_kernel = _provenance_by_kernel(part)
    out = []
    graph = PartitionName(part.name)  # records only name partitions (compile_records._enriched)
    index = KernelNodes(post, pre_to_post, part.name == "backward")
    parsed = parse_output_code(part.output_code)
    # externs first: the buffers they write seed the data flow of generated kernels' later calls
    fused_of = {pk.name: _fused(pk, by_kernel, index, pre_to_post, post_names)
                for pk in sorted(parsed, key=lambda pk: pk.language != "extern")}  # fmt: skip
    for pk in parsed:
        fused = fused_of[pk.name]
        fused = [n for n in dict.fromkeys(fused) if not post_names or n in post_names]
        named = _named_nodes(pk, by_kernel, backward=part.name == "backward")
        out.append(Kernel(
            name=pk.name, language=pk.language, graph=graph, source=pk.source,
            fused_nodes=tuple(fused), original_aten=tuple(pk.original_aten),
            line_nodes=_line_nodes(pk.source, fused), output_code_line=pk.line,
            launches=1 if pk.language == "extern" else len(pk.calls),
            inferred_nodes=tuple(n for n in fused if n not in named),
        ))  # fmt: skip
    out = _with_recomputed(out)
    if post is None:
        return out
    # Lines are marked at the call the Graph fragment describes, from that call's nodes: the
    # other calls' nodes (same ops, other layers) would only be wrong candidates for its lines.
    at_first = [replace(k, fused_nodes=tuple(index.first_call[k.name])) if k.name in index.first_call
                else k for k in out]  # fmt: skip
    marks = kernel_marks(part.output_code, at_first, post, pre_to_post)
    return [k if k.language == "extern" else replace(k, line_nodes=marks.get(k.name, {})) for k in out]


def _with_recomputed(kernels: list[Kernel]) -> list[Kernel]:
    """Each generated kernel's named nodes that another generated kernel names too (inlined
    pointwise work Inductor recomputes in each kernel that reads it)."""
    owners: dict[str, int] = {}
    for k in kernels:
        if k.language != "extern":
            for n in set(k.fused_nodes) - set(k.inferred_nodes):
                owners[n] = owners.get(n, 0) + 1
    return [replace(k, recomputed_nodes=tuple(n for n in k.fused_nodes if owners.get(n, 0) > 1
                                              and n not in k.inferred_nodes))
            if k.language != "extern" else k for k in kernels]  # fmt: skip


def _named_nodes(pk: ParsedKernel, by_kernel: dict[str, list[str]], backward: bool) -> set[str]:
    """Nodes a record of Inductor names for this kernel: its provenance entry (for an extern
    call, also its callee's entry without a handle, which names every call's nodes), its Graph
    fragment, its node-mapping comment and, in a backward, the comments above its launches (a
    forward's launch comments give Dynamo's names, some of which spell unrelated post-grad nodes)."""
    named = set(by_kernel.get(pk.name, ())) | set(pk.fragment_nodes) | set(pk.post_grad_nodes)
    if pk.language == "extern":
        named.update(by_kernel.get(pk.name.rsplit(":", 1)[0], ()))
    if backward:
        for names in pk.call_names:
            named.update(names)
    return named


def _fused(pk: ParsedKernel, by_kernel: dict[str, list[str]], index: KernelNodes,
           pre_to_post: dict[str, list[str]], post_names: set[str]) -> list[str]:  # fmt: skip
    provenance = by_kernel.get(pk.name, [])
    if provenance:  # Inductor's own kernel → node map: exact, so nothing is added to it
        return list(provenance)
    if pk.language == "extern":  # the node its comment names, not the n-th of its op
        return index.extern(pk) or list(pk.post_grad_nodes)
    if pk.fragment_nodes and post_names:  # Inductor's Graph fragment and its images (kernel_nodes.py)
        return index.generated(pk)
    fused = list(pk.post_grad_nodes)
    for src in pk.source_nodes:  # Source Nodes: Dynamo names (forward) or post-grad (backward)
        fused += pre_to_post.get(src, []) if src not in post_names else [src]
    return fused


def _provenance_by_kernel(part: Partition) -> dict[str, list[str]]:
    """Kernel name -> post-grad nodes from `cppCodeToPost` ("name:handle" keys) or older mappings.

    Extern keys ("extern_kernels.addmm:2") carry a global handle, not our per-callee ordinal, so
    the n-th key of a callee maps to our `<callee>:<n>`. An older log's extern key has no handle
    (`extern_kernels.mm: [mm_default_1, mm_default, mul]`): it lists the nodes of every call of
    that callee, and more, so it stays under the bare callee, which no kernel is named: each call
    then finds its own node (`KernelNodes.extern`), and the entry only counts as naming it.
    """
    out: dict[str, list[str]] = {}
    counts: dict[str, int] = {}
    code_to_post = part.provenance.get("cppCodeToPost") or {}
    for key, nodes in code_to_post.items():
        handle = re.search(r":\d+$", key) is not None
        base = key.rsplit(":", 1)[0] if handle else key
        if handle and base.startswith(("extern_kernels.", "aten.", "torch.ops.")):
            counts[base] = counts.get(base, 0) + 1
            base = extern_name(base, counts[base])
        out.setdefault(base, []).extend(str(n) for n in nodes)
    for key, nodes in part.kernel_to_post.items():
        out.setdefault(key, []).extend(str(n) for n in nodes)
    return out


def _line_nodes(source: str, fused: list[str]) -> dict[str, tuple[str, ...]]:
    """Lines of the kernel that name a fused node as a whole word (Inductor's `# node` comments,
    `tmpN = ... # name` hints, buffer names that match a node)."""
    if not fused or not source:
        return {}
    out: dict[str, tuple[str, ...]] = {}
    if all(_WORD.fullmatch(n) for n in fused):
        # A word-bounded identifier is exactly one maximal \w run: a set lookup per token instead
        # of one large alternation regex compiled per kernel, which dominates on deep models.
        names = set(fused)
        for i, line in enumerate(source.split("\n"), start=1):
            hits = tuple(dict.fromkeys(t for t in _WORD.findall(line) if t in names))
            if hits:
                out[str(i)] = hits
        return out
    alternatives = "|".join(re.escape(n) for n in sorted(fused, key=len, reverse=True))
    pattern = re.compile(r"\b(" + alternatives + r")\b")
    for i, line in enumerate(source.split("\n"), start=1):
        hits = tuple(dict.fromkeys(pattern.findall(line)))
        if hits:
            out[str(i)] = hits
    return out


def _metrics(acc: CompileRecords) -> CompileMetrics:
    m = acc.metrics
    stage = {k: v for k, v in acc.stage_s.items() if _seconds(acc, f"the {k} stage events", v) is not None}
    total = _seconds(acc, "entire_frame_compile_time_s", m.get("entire_frame_compile_time_s")) or \
        stage.pop("total", None)  # fmt: skip
    stage.pop("total", None)
    backend = _seconds(acc, "backend_compile_time_s", m.get("backend_compile_time_s"))
    if backend is not None:
        stage["backend"] = backend
    for key, field in (("inductor", "inductor_compile_time_s"), ("codegen", "code_gen_time_s")):
        value = _seconds(acc, field, m.get(field))
        if value is not None:
            stage[key] = value
    # A training graph's backward is compiled lazily, at its first call: after the frame's compile
    # and outside its timers, so it is its own stage (its Inductor time includes its codegen).
    # Added to the frame's `inductor` it outgrew `aot` and `backend`, which contain the forward's.
    backward = _seconds(acc, "the backward's inductor_compile_time_s",
                        acc.bwd_metrics.get("inductor_compile_time_s"))  # fmt: skip
    if backward:
        stage["backward"] = backward
    if total is not None and "backend" in stage and "dynamo" not in stage:
        stage["dynamo"] = max(total - stage["backend"], 0.0)
    extra = {
        k: str(m[k])
        for k in (
            "graph_op_count",
            "graph_node_count",
            "guard_count",
            "cache_size",
            "restart_reasons",
            "dynamo_time_before_restart_s",
        )
        if m.get(k)
    }
    # Inductor puts its CUDA-graph skip sentence in the metrics of the compile that skipped
    # (forward, or the lazily compiled backward): a skip record even without our log taps.
    skip = m.get("cudagraph_skip_reason") or acc.bwd_metrics.get("cudagraph_skip_reason")
    if skip:
        extra["cudagraph_skip_reason"] = str(skip)
    return CompileMetrics(
        total_s=total, stage_s=stage, cache=dict(acc.cache), co_name=str(m.get("co_name") or ""),
        co_filename=str(m.get("co_filename") or ""), co_firstlineno=m.get("co_firstlineno"),
        fail_type=str(m.get("fail_type") or ""), fail_reason=str(m.get("fail_reason") or ""), extra=extra,
    )  # fmt: skip


def _seconds(acc: CompileRecords, what: str, value: Any) -> float | None:
    """A time in seconds; one that is no number or past anything real (value_bounds.py) is
    dropped and noted in `acc.problems`."""
    out = seconds(value)
    if out is None and value is not None:
        acc.problems.append(f"compile {acc.compile_id}: {what} = {str(value)[:40]} is no time in seconds; "
                            "left unmeasured")  # fmt: skip
    return out


def _status(acc: CompileRecords, metrics: CompileMetrics, dynamo: Graph | None) -> tuple[CompileStatus, str]:
    if metrics.fail_type or acc.errors:
        logged = (acc.errors[0].strip().splitlines() or [""])[-1] if acc.errors else ""
        reason = metrics.fail_reason or logged
        head = f"{metrics.fail_type}: {reason}" if metrics.fail_type else reason
        return CompileStatus.FAILED, head.strip()
    if acc.cache.get("fx_graph") == "hit" or acc.cache.get("aotautograd") == "hit":
        return CompileStatus.CACHE_HIT, ""
    if dynamo is None and not acc.partitions and acc.metrics.get("graph_op_count") in (0, None):
        return CompileStatus.EMPTY, ""
    return CompileStatus.OK, ""


def _code_loc(m: dict[str, Any]) -> SourceLoc | None:
    if not m.get("co_filename"):
        return None
    return SourceLoc(str(m["co_filename"]), int(m.get("co_firstlineno") or 0), str(m.get("co_name") or ""))


def _guards(acc: CompileRecords) -> tuple[Guard, ...]:
    if acc.guards_text:
        out = []
        for line in acc.guards_text.splitlines():
            m = _GUARD_KIND.match(line)
            if not m or m.group(1) in ("RootGuardManager",):
                continue
            code, source = m.group(2), None
            loc = guard_location(code)
            if loc is not None:
                start, text, path, line_no, fn = loc
                source = SourceLoc(path, int(line_no), fn, text)
                code = code[:start].rstrip()
            out.append(Guard(code=code.split("  #")[0].rstrip(), kind=m.group(1), source=source))
        return tuple(out)
    return tuple(
        Guard(code=str(g.get("code", "")), kind=str(g.get("guard_type") or g.get("type") or ""))
        for g in acc.guards_json if isinstance(g, dict)
    )  # fmt: skip


def guard_location(code: str) -> tuple[int, str, str, str, str] | None:
    """What `_GUARD_LOC.search(code)` finds, as (start, code text, path, line, function), without
    its lazy scan from every `#` (a deep model has thousands of guard lines). The location
    holds no `#`, so its `#` is the line's last; the match starts at the first `#` before it,
    and the text between is stripped as the pattern's `\\s*` around `(.*?)` strip it."""
    last = code.rfind("#")
    first = code.find("#")
    if first < 0 or first == last:
        return None
    tail = _GUARD_TAIL.match(code, last)
    if tail is None:
        return None
    return first, code[first + 1 : last].strip(), tail.group(1), tail.group(2), tail.group(3)

