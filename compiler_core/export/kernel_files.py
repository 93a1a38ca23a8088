"""Export ▸ Kernels: one runnable file per kernel, each partition's output code, a repro of each
Dynamo graph, and an index; for one compile (the GUI's current one) or all of them at once.

Each kernel file opens with a header saying which post-grad nodes it fuses and which user lines
they came from, then the machine it was generated for (machine_stamp.py), then a harness that
runs it alone (kernel_harness.py, extern_calls.py). Qt-free and torch-free: exporting a log
needs only the session and its link index.

Every file name is built from session data (partition and kernel names), so every one goes
through `SafeFolder`: sanitised, unique, and verified to lie inside the chosen folder. A session
whose kernel is named `../../x/sitecustomize` exports `forward__x_sitecustomize.py`, in the
folder. Names never become identifiers in the generated code either: they appear only in
comments (one line each) and as `repr` string literals.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from compiler_core.export.call_plan import CallPlan, Launch, TensorSpec, kernel_params, plan_calls
from compiler_core.export.eager_reference import EagerMatch, GraphFacts, match, meta_spec
from compiler_core.export.export_index import Entry, compile_entry, kernel_entry, write_index
from compiler_core.export.extern_calls import extern_script, launch_device
from compiler_core.export.graph_repros import graph_repro
from compiler_core.export.harness_inputs import literal, not_runnable, one_line
from compiler_core.export.kernel_harness import cpp_arg_types, cpp_harness, triton_harness
from compiler_core.export.machine_stamp import MachineStamp, preamble, session_stamp
from compiler_core.safe_paths import SafeFolder
from compiler_core.session import (
    Compile,
    Graph,
    InductorOutput,
    Kernel,
    LinkIndex,
    Ref,
    RefKind,
    Session,
    TensorMeta,
)
from compiler_core.trace.output_code import split_extern_name

_DEVICE_STR = re.compile(r"device_str='(\w+)'")


def kernel_file_path(folder: SafeFolder, k: Kernel, prefix: str = "") -> Path:
    """`{prefix}{graph}__{kernel}.py`, every part sanitised, unique within the export."""
    return folder.path(f"{prefix}{k.graph or 'graph'}__{k.name}", ".py", fallback="kernel")


def kernel_source_lines(index: LinkIndex, c: Compile, k: Kernel) -> list[tuple[str, int]]:
    """(path, line) of the user source lines the kernel came from, sorted."""
    ref = Ref.kernel(c.compile_id, k.graph, k.name, c.rank)
    return sorted({(r.path, r.line) for r in index.related(ref) if r.kind is RefKind.SOURCE_LINE})


def kernel_header(c: Compile, k: Kernel, sources: list[tuple[str, int]], session: Session) -> str:
    text = {p: t.splitlines() for p, t in session.sources.items()}
    rows = [
        one_line(f"Kernel {k.name} ({k.language}) of compile [{c.compile_id}], {k.graph} graph"),
        one_line(f"Fuses post-grad nodes: {', '.join(k.fused_nodes) or '(none recorded)'}"),
    ]
    if k.original_aten:
        rows.append(one_line(f"Original aten ops: {', '.join(k.original_aten)}"))
    rows.append("From user source lines:" if sources else "From user source lines: (unknown)")
    for path, line in sources:
        code = text.get(path, [])
        snippet = code[line - 1].strip() if 0 < line <= len(code) else ""
        rows.append(one_line(f"  {path}:{line}  {snippet}"))
    rows.append("Exported by CompileScope")
    return "\n".join(f"# {row}" for row in rows) + "\n"


@dataclass
class _Partition:
    """One partition's output code, read once for all of its kernels."""

    part: InductorOutput
    plan: CallPlan | None
    facts: GraphFacts | None
    launches: dict[str, list[Launch]] = field(default_factory=dict)

    @staticmethod
    def read(part: InductorOutput) -> _Partition:
        generated = {k.name: kernel_params(k.source) for k in part.kernels if k.language != "extern"}
        facts = GraphFacts.of(part.post_grad) if part.post_grad is not None else None
        outputs = _extern_outputs(part, facts)
        plan = plan_calls(part.output_code, generated, outputs) if part.output_code else None
        launches: dict[str, list[Launch]] = {}
        for launch in plan.launches if plan else ():
            launches.setdefault(launch.name, []).append(launch)
        return _Partition(part, plan, facts, launches)

    def first_launch(self, k: Kernel) -> Launch | None:
        found = self.launches.get(k.name)
        return found[0] if found else None


def _extern_outputs(
    part: InductorOutput, facts: GraphFacts | None
) -> dict[str, tuple[tuple[str, TensorSpec], ...]]:
    """extern kernel -> the (node, tensor) pairs its op returns, from its post-grad node's
    metadata (a tuple op's node may record none: then from the `getitem` nodes that take its parts)."""
    if facts is None:
        return {}
    g = facts.graph
    out: dict[str, tuple[tuple[str, TensorSpec], ...]] = {}
    for k in part.kernels:
        split = split_extern_name(k.name) if k.language == "extern" else None
        if split is None:
            continue
        op = split[0].removeprefix("torch.ops.").removeprefix("extern_kernels.").removeprefix("aten.")
        op = op.split(".")[0]
        node = next(
            (
                n
                for name in k.fused_nodes
                if (n := g.node(name)) is not None
                and n.target.removeprefix("torch.ops.").split(".")[:2] == ["aten", op]
            ),
            None,
        )
        if node is None:
            continue
        metas = [(node.name, m) for m in node.outputs]
        if not metas:
            metas = _parts(g, facts.parts.get(node.name, {}))
        specs = [(name, meta_spec(m, {})) for name, m in metas]
        if metas and all(s is not None for _, s in specs):
            out[k.name] = tuple((name, s) for name, s in specs if s is not None)
    return out


def _parts(g: Graph, parts: dict[int, str]) -> list[tuple[str, TensorMeta]]:
    """The getitem nodes `x = node[0]`, `node[1]`... with their metadata, up to a gap."""
    found: list[tuple[str, TensorMeta]] = []
    while len(found) in parts:
        n = g.node(parts[len(found)])
        if n is None or len(n.outputs) != 1:
            break
        found.append((n.name, n.outputs[0]))
    return found


def _kernel_file(
    session: Session, c: Compile, p: _Partition, k: Kernel, header: str, stamp: MachineStamp
) -> tuple[str, str]:
    """(file text, what its eager check is) for one kernel."""
    launch = p.first_launch(k)
    if k.language == "cpp":
        eager = (
            match(k, p.facts, p.plan, launch)
            if p.plan and launch
            else EagerMatch(why_not="no launch of it was read")
        )
        types = cpp_arg_types(p.part.output_code, k.name)
        note = f"not checked: {eager.why_not}" if eager.why_not else "eager ATen, rtol=atol=1e-4"
        return cpp_harness(header, stamp, k, p.plan, launch, eager, types), note
    if k.language == "triton":
        device = _device_of(p.part.output_code)
        return triton_harness(header, stamp, k, p.plan, launch, device), "none (timed with do_bench)"
    if k.language == "extern":
        device = launch_device(p.plan, launch, stamp.device or "cpu")
        return extern_script(header, stamp, k, p.plan, launch, device), "none: the ATen op itself"
    text = (
        header
        + preamble(stamp, stamp.device or "cpu", compiled_cpp=False)
        + f"SOURCE = {literal(k.source)}\n"
        + not_runnable(f"no harness for {k.language} kernels")
    )
    return text, "none"


def _output_code_file(part: InductorOutput, stamp: MachineStamp) -> str:
    languages = {k.language for k in part.kernels}
    device = "cpu" if "triton" not in languages else _device_of(part.output_code)
    return preamble(stamp, device, compiled_cpp="cpp" in languages) + "\n" + part.output_code


def _device_of(code: str) -> str:
    m = _DEVICE_STR.search(code)
    return m.group(1) if m else "cuda"


def _export_compile(
    out: SafeFolder,
    session: Session,
    c: Compile,
    index: LinkIndex,
    stamp: MachineStamp,
    prefix: str,
    with_repro: bool,
) -> tuple[list[Path], Entry]:
    written: list[Path] = []
    entries: list[Entry] = []
    files: dict[str, str] = {}
    symbols: dict[str, int] = {}
    for part in c.inductor:
        p = _Partition.read(part)
        if p.plan is not None:
            symbols.update(p.plan.symbols)
        for k in part.kernels:
            sources = kernel_source_lines(index, c, k)
            text, eager = _kernel_file(session, c, p, k, kernel_header(c, k, sources, session), stamp)
            path = out.write_text(kernel_file_path(out, k, prefix), text)
            written.append(path)
            entries.append(kernel_entry(session, c, k, path, sources, len(p.launches.get(k.name, ())), eager))
        if part.output_code:
            path = out.write_text(
                out.path(f"{prefix}output_code_{part.graph}", ".py"), _output_code_file(part, stamp)
            )
            written.append(path)
            files[f"output code ({part.graph})"] = path.name
    if with_repro and (c.artifacts.get("fx_graph_runnable") or c.dynamo_graph is not None):
        text = graph_repro(
            f"# Repro of Dynamo graph [{one_line(c.compile_id)}]\n# Exported by CompileScope\n",
            stamp,
            c,
            symbols,
            bool(session.meta.train),
        )
        path = out.write_text(out.path(f"{prefix}graph_repro", ".py"), text)
        written.append(path)
        files["graph repro"] = path.name
    return written, compile_entry(c, entries, files)


def export_kernels(
    session: Session, c: Compile, folder: str | Path, links: LinkIndex | None = None
) -> list[Path]:
    """One compile's kernels and output code, flat in `folder`, with its index; returns the files.

    `links` is the session's index (the explorer passes its model's); built here without it."""
    out = SafeFolder(folder)
    index = LinkIndex(session.links) if links is None else links
    stamp = session_stamp(session)
    written, entry = _export_compile(out, session, c, index, stamp, "", with_repro=False)
    return [*written, *write_index(out, stamp, [entry], single=True)]


def select_compiles(
    session: Session, compile_id: str | None = None, rank: int | None = None
) -> list[Compile]:
    """The compiles an export takes: all, or those with this id and/or rank."""
    return [
        c
        for c in session.compiles
        if (compile_id is None or c.compile_id == compile_id) and (rank is None or c.rank == rank)
    ]


def export_compiles(
    session: Session,
    folder: str | Path,
    compiles: list[Compile] | None = None,
    links: LinkIndex | None = None,
) -> list[Path]:
    """Every compile (every rank and run) of `session`, or `compiles`, in one folder: each one's
    kernels, output code and graph repro, prefixed by its id when there are several, and one index."""
    chosen = session.compiles if compiles is None else tuple(compiles)
    out = SafeFolder(folder)
    index = LinkIndex(session.links) if links is None else links
    stamp = session_stamp(session)
    written: list[Path] = []
    entries: list[Entry] = []
    for c in chosen:
        if not c.inductor and c.dynamo_graph is None:
            continue
        prefix = "" if len(chosen) == 1 else _compile_tag(c) + "__"
        files, entry = _export_compile(out, session, c, index, stamp, prefix, with_repro=True)
        written += files
        entries.append(entry)
    return [*written, *write_index(out, stamp, entries, single=False)]


def _compile_tag(c: Compile) -> str:
    """`c0_1`, `r3_c0_1` for rank 3; a later run's id already says `#2` (sanitised to `_2`)."""
    rank = "" if c.rank is None else f"r{c.rank}_"
    return f"{rank}c{c.compile_id}"
