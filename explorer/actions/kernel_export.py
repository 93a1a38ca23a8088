"""Export ▸ Kernels: a folder with one file per kernel, the whole output code, and an index.

Each kernel file opens with a header saying which post-grad nodes it fuses and which user lines
they came from, so a kernel can be read (or diffed, or handed to a colleague) out of the app.
Qt-free: it only needs the session and its link index.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from compiler_core.session import Compile, Kernel, LinkIndex, Ref, RefKind, Session
from compiler_core.session.codec import atomic_write_text
from compiler_core.session.refs import graph_key, split_source_key

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def kernel_file_name(k: Kernel) -> str:
    suffix = ".cpp" if k.language == "cpp" else ".py"
    return f"{k.graph or 'graph'}__{_UNSAFE.sub('_', k.name)}{suffix}"


def kernel_source_lines(index: LinkIndex, c: Compile, k: Kernel) -> list[str]:
    ref = Ref(RefKind.KERNEL, c.compile_id, graph_key(k.graph, k.name), c.rank)
    lines = {split_source_key(r.key) for r in index.related(ref) if r.kind is RefKind.SOURCE_LINE}
    return [f"{path}:{line}" for path, line in sorted(lines)]


def kernel_header(c: Compile, k: Kernel, sources: list[str], session: Session) -> str:
    comment = "//" if k.language == "cpp" else "#"
    text = {p: t.splitlines() for p, t in session.sources.items()}
    rows = [
        f"Kernel {k.name} ({k.language}) of compile [{c.compile_id}], {k.graph} graph",
        f"Fuses post-grad nodes: {', '.join(k.fused_nodes) or '(none recorded)'}",
    ]
    if k.original_aten:
        rows.append(f"Original aten ops: {', '.join(k.original_aten)}")
    rows.append("From user source lines:" if sources else "From user source lines: (unknown)")
    for loc in sources:
        path, _, line = loc.rpartition(":")
        code = text.get(path, [])
        snippet = code[int(line) - 1].strip() if 0 < int(line) <= len(code) else ""
        rows.append(f"  {loc}  {snippet}".rstrip())
    rows.append("Exported by CompileScope")
    return "\n".join(f"{comment} {row}" for row in rows) + "\n\n"


def export_kernels(session: Session, c: Compile, folder: str | Path) -> list[Path]:
    """Write the export; returns the files written (kernels, output code, index.json, INDEX.md)."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    index = LinkIndex.of(session.links)
    written: list[Path] = []
    entries: list[dict[str, object]] = []
    for part in c.inductor:
        for k in part.kernels:
            sources = kernel_source_lines(index, c, k)
            path = out / kernel_file_name(k)
            atomic_write_text(path, kernel_header(c, k, sources, session) + k.source + "\n")
            written.append(path)
            entries.append({"kernel": k.name, "language": k.language, "graph": k.graph, "file": path.name,
                            "fused_nodes": list(k.fused_nodes), "source_lines": sources})
        if part.output_code:
            path = out / f"output_code_{part.graph}.py"
            atomic_write_text(path, part.output_code)
            written.append(path)
    return [*written, *_write_index(out, c, entries)]


def _write_index(out: Path, c: Compile, entries: list[dict[str, object]]) -> list[Path]:
    index_json = out / "index.json"
    payload = {"compile_id": c.compile_id, "rank": c.rank, "kernels": entries}
    atomic_write_text(index_json, json.dumps(payload, indent=2))
    rows = [f"# Kernels of compile [{c.compile_id}]", "",
            "| Kernel | Language | Graph | Nodes | From lines |", "|---|---|---|---|---|"]
    for e in entries:
        nodes, lines = e["fused_nodes"], e["source_lines"]
        assert isinstance(nodes, list) and isinstance(lines, list)
        where = ", ".join(Path(str(s)).name for s in lines)
        link = f"[{e['kernel']}]({e['file']})"
        rows.append(f"| {link} | {e['language']} | {e['graph']} | {len(nodes)} | {where} |")
    index_md = out / "INDEX.md"
    atomic_write_text(index_md, "\n".join(rows) + "\n")
    return [index_json, index_md]
