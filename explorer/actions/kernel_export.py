"""Export ▸ Kernels: a folder with one file per kernel, the whole output code, and an index.

Each kernel file opens with a header saying which post-grad nodes it fuses and which user lines
they came from, so a kernel can be read (or diffed, or handed to a colleague) out of the app.
Qt-free: it only needs the session and its link index.

Every file name is built from session data (partition and kernel names), so every one goes
through `SafeFolder`: sanitised, unique, and verified to lie inside the chosen folder. A session
whose `graph` is `../../x/sitecustomize` exports `output_code_x_sitecustomize.py`, in the folder.
"""

from __future__ import annotations

import json
from pathlib import Path

from compiler_core.safe_paths import SafeFolder
from compiler_core.session import Compile, Kernel, LinkIndex, Ref, RefKind, Session


def kernel_file_path(folder: SafeFolder, k: Kernel) -> Path:
    """`{graph}__{kernel}.py` (or `.cpp`), both parts sanitised, unique within the export."""
    suffix = ".cpp" if k.language == "cpp" else ".py"
    return folder.path(f"{k.graph or 'graph'}__{k.name}", suffix, fallback="kernel")


def _one_line(text: object) -> str:
    """Header rows are comments: a name holding a newline must not start a line of code."""
    return " ".join(str(text).split())


def kernel_source_lines(index: LinkIndex, c: Compile, k: Kernel) -> list[tuple[str, int]]:
    """(path, line) of the user source lines the kernel came from, sorted."""
    ref = Ref.kernel(c.compile_id, k.graph, k.name, c.rank)
    return sorted({(r.path, r.line) for r in index.related(ref) if r.kind is RefKind.SOURCE_LINE})


def kernel_header(c: Compile, k: Kernel, sources: list[tuple[str, int]], session: Session) -> str:
    comment = "//" if k.language == "cpp" else "#"
    text = {p: t.splitlines() for p, t in session.sources.items()}
    rows = [
        _one_line(f"Kernel {k.name} ({k.language}) of compile [{c.compile_id}], {k.graph} graph"),
        _one_line(f"Fuses post-grad nodes: {', '.join(k.fused_nodes) or '(none recorded)'}"),
    ]
    if k.original_aten:
        rows.append(_one_line(f"Original aten ops: {', '.join(k.original_aten)}"))
    rows.append("From user source lines:" if sources else "From user source lines: (unknown)")
    for path, line in sources:
        code = text.get(path, [])
        snippet = code[line - 1].strip() if 0 < line <= len(code) else ""
        rows.append(_one_line(f"  {path}:{line}  {snippet}"))
    rows.append("Exported by CompileScope")
    return "\n".join(f"{comment} {row}" for row in rows) + "\n\n"


def export_kernels(session: Session, c: Compile, folder: str | Path,
                   links: LinkIndex | None = None) -> list[Path]:
    """Write the export; returns the files written (kernels, output code, index.json, INDEX.md).

    `links` is the session's index (the explorer passes its model's); built here without it."""
    out = SafeFolder(folder)
    index = LinkIndex(session.links) if links is None else links
    written: list[Path] = []
    entries: list[dict[str, object]] = []
    for part in c.inductor:
        for k in part.kernels:
            sources = kernel_source_lines(index, c, k)
            text = kernel_header(c, k, sources, session) + k.source + "\n"
            path = out.write_text(kernel_file_path(out, k), text)
            written.append(path)
            entries.append({"kernel": k.name, "language": k.language, "graph": k.graph, "file": path.name,
                            "fused_nodes": list(k.fused_nodes),
                            "source_lines": [f"{path}:{line}" for path, line in sources]})
        if part.output_code:
            path = out.write_text(out.path(f"output_code_{part.graph}", ".py"), part.output_code)
            written.append(path)
    return [*written, *_write_index(out, c, entries)]


def _md(text: object) -> str:
    """A Markdown table cell from data: no line breaks, and `|`, `[`, `]`, `<` cannot format."""
    return "".join(f"\\{ch}" if ch in "|[]<>`*_" else ch for ch in _one_line(text))


def _write_index(out: SafeFolder, c: Compile, entries: list[dict[str, object]]) -> list[Path]:
    payload = {"compile_id": c.compile_id, "rank": c.rank, "kernels": entries}
    index_json = out.write_text(out.path("index", ".json"), json.dumps(payload, indent=2))
    rows = [f"# Kernels of compile \\[{_md(c.compile_id)}\\]", "",
            "| Kernel | Language | Graph | Nodes | From lines |", "|---|---|---|---|---|"]
    for e in entries:
        nodes, lines = e["fused_nodes"], e["source_lines"]
        assert isinstance(nodes, list) and isinstance(lines, list)
        where = ", ".join(Path(str(s)).name for s in lines)
        link = f"[{_md(e['kernel'])}]({e['file']})"  # file: a SafeFolder name, nothing to escape
        cells = (link, _md(e["language"]), _md(e["graph"]), str(len(nodes)), _md(where))
        rows.append(f"| {' | '.join(cells)} |")
    index_md = out.write_text(out.path("INDEX", ".md"), "\n".join(rows) + "\n")
    return [index_json, index_md]
