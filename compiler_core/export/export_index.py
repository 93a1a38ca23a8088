"""INDEX.md and index.json of an export: each kernel with its nodes, the user lines it came from,
its launches per step and, where the session profiled it, its µs per step per mode.

`launches` is the session's count where it recorded one, else the number of times the output
code's `call()` launches the kernel (one call of the partition per step: a forward and a
backward each run once per training step). Every cell of the Markdown table is escaped, since
kernel and node names come from the log.
"""

from __future__ import annotations

import json
from pathlib import Path

from compiler_core.export.harness_inputs import one_line
from compiler_core.export.machine_stamp import REFUSED_EXIT, MachineStamp
from compiler_core.safe_paths import SafeFolder
from compiler_core.session import Compile, Kernel, Ref, Session

Entry = dict[str, object]


def kernel_times(session: Session, c: Compile, k: Kernel) -> dict[str, float]:
    """mode -> µs per step the session's profile measured for this kernel (empty: not profiled)."""
    key = Ref.kernel(c.compile_id, k.graph, k.name, c.rank).encode()
    return {m.mode: round(m.time_by_ref[key], 3) for m in session.mode_stats if key in m.time_by_ref}


def kernel_entry(
    session: Session,
    c: Compile,
    k: Kernel,
    file: Path,
    sources: list[tuple[str, int]],
    launches: int,
    eager: str,
) -> Entry:
    return {
        "kernel": k.name,
        "language": k.language,
        "graph": str(k.graph),
        "file": file.name,
        "fused_nodes": list(k.fused_nodes),
        "source_lines": [f"{path}:{line}" for path, line in sources],
        "launches_per_step": k.launches or launches,
        "us_per_step": kernel_times(session, c, k),
        "eager_check": eager,
    }


def compile_entry(c: Compile, kernels: list[Entry], files: dict[str, str]) -> Entry:
    return {"compile_id": c.compile_id, "rank": c.rank, "run": c.run, "files": files, "kernels": kernels}


def md(text: object) -> str:
    """A Markdown table cell from data: no line breaks, and `|`, `[`, `]`, `<` cannot format."""
    return "".join(f"\\{ch}" if ch in "|[]<>`*_" else ch for ch in one_line(text))


def write_index(out: SafeFolder, stamp: MachineStamp, compiles: list[Entry], single: bool) -> list[Path]:
    """index.json and INDEX.md; `single` keeps the one-compile layout (`kernels` at the top)."""
    machine = stamp.as_dict()
    if single:
        payload: Entry = {**compiles[0], "machine": machine}
    else:
        payload = {"machine": machine, "compiles": compiles}
    index_json = out.write_text(out.path("index", ".json"), json.dumps(payload, indent=2))
    rows = [
        "# Exported kernels",
        "",
        f"Generated for {md(stamp.describe())}. Every `.py` file runs alone (`python FILE.py`); on "
        f"another machine it prints why and exits {REFUSED_EXIT} before loading compiled code.",
        "",
    ]
    for entry in compiles:
        rows += _compile_rows(entry)
    index_md = out.write_text(out.path("INDEX", ".md"), "\n".join(rows) + "\n")
    return [index_json, index_md]


def _compile_rows(entry: Entry) -> list[str]:
    rank = "" if entry["rank"] is None else f", rank {md(entry['rank'])}"
    rows = [f"## Kernels of compile \\[{md(entry['compile_id'])}\\]{rank}", ""]
    files = entry["files"]
    assert isinstance(files, dict)
    for what, name in files.items():
        rows.append(f"- {md(what)}: [{name}]({name})")  # name: a SafeFolder name, nothing to escape
    rows += [
        "",
        "| Kernel | Language | Graph | Nodes | From lines | Launches/step | µs/step | Eager check |",
        "|---|---|---|---|---|---|---|---|",
    ]
    kernels = entry["kernels"]
    assert isinstance(kernels, list)
    for e in kernels:
        nodes, lines, times = e["fused_nodes"], e["source_lines"], e["us_per_step"]
        assert isinstance(nodes, list) and isinstance(lines, list) and isinstance(times, dict)
        where = ", ".join(Path(str(s)).name for s in lines)
        timing = ", ".join(f"{md(mode)} {us}" for mode, us in times.items()) or "not profiled"
        cells = (
            f"[{md(e['kernel'])}]({e['file']})",
            md(e["language"]),
            md(e["graph"]),
            str(len(nodes)),
            md(where),
            md(e["launches_per_step"]),
            timing,
            md(e["eager_check"]),
        )
        rows.append(f"| {' | '.join(cells)} |")
    rows.append("")
    return rows
