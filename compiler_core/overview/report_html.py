"""The Overview as one self-contained HTML file, for someone who does not have the app.

One file, opened from disk in any browser: inline CSS, no script, no font, image or link to
anything outside it, so it works with no server and no network and shows nothing a mail filter
or a reviewer's browser would fetch. Every text that comes from a log or session (names, paths,
reasons, guard code) goes through `html.escape`: a kernel or file named `<script>` reads as
that text. Under the verdict and the sections come the tables a reader asks for next: breaks
ranked by cost, recompiles, step time per mode and every kernel with its time per step where a
step was profiled.

`overview_fragment` is the part the Overview pane shows too (with links that select a fact's
refs), so the app and the report say the same thing in the same order.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from html import escape
from pathlib import Path

from compiler_core import __version__
from compiler_core.overview.break_facts import first_line, where
from compiler_core.overview.model import Level, Overview
from compiler_core.queries.break_ranking import distinct_breaks
from compiler_core.queries.mode_compare import COLUMNS as MODE_COLUMNS
from compiler_core.queries.mode_compare import session_mode_rows
from compiler_core.session.codec import atomic_write_text
from compiler_core.session.model import Session
from compiler_core.session.refs import Ref

CSP = "default-src 'none'; style-src 'unsafe-inline'"
MAX_KERNEL_ROWS = 3000  # a 32-layer model has ~1,500 kernels and extern calls per partition set

CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d1d1f; margin: 0;
       background: #f6f7f9; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 20px; margin: 0 0 4px; }
h2 { font-size: 16px; margin: 26px 0 6px; border-bottom: 1px solid #d8dbe0; padding-bottom: 3px; }
.meta { color: #5f6368; font-size: 12.5px; }
.verdict { font-size: 16px; font-weight: 600; background: #fff; border-left: 5px solid #2f6fde;
           padding: 10px 14px; margin: 14px 0 8px; }
.headline { color: #333; margin: 4px 0; }
ul.facts { margin: 2px 0 8px; padding-left: 20px; }
ul.facts li { margin: 3px 0; }
li.warning { list-style-type: square; }
li.warning .text { color: #a4262c; }
.detail { color: #5f6368; font-size: 12.5px; }
.notes { color: #5f6368; font-size: 12.5px; }
table { border-collapse: collapse; background: #fff; font-size: 12.5px; width: 100%; margin: 6px 0 14px; }
th, td { border: 1px solid #e1e4e8; padding: 3px 7px; text-align: left; vertical-align: top;
         overflow-wrap: anywhere; }
th { background: #eef1f5; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
code { font: 12px ui-monospace, "SF Mono", Menlo, Consolas, monospace; }
footer { color: #80868b; font-size: 12px; margin-top: 30px; }
"""


MAX_TEXT = 2000  # characters of one shown text: a log's reason or hint can be megabytes


def _e(value: object) -> str:
    text = str(value)
    if len(text) > MAX_TEXT:
        text = text[:MAX_TEXT] + f"… ({len(text) - MAX_TEXT:,} more characters)"
    return escape(text, quote=True)


def overview_fragment(ov: Overview, link: Callable[[int], str] | None = None, *, verdict: bool = True,
                      marked: Collection[int] = ()) -> str:  # fmt: skip
    """The verdict and the sections as HTML (every data text escaped); with `link`, each fact
    is an anchor to `link(i)`, `i` its index in `ov.facts()`; facts in `marked` get the class
    `marked` (the pane's selection)."""
    parts = [f'<p class="verdict">{_e(ov.verdict)}</p>'] if verdict else []
    index = 0
    for section in ov.sections:
        parts.append(f'<h2 id="{_e(section.key)}">{_e(section.title)}</h2>')
        parts.append(f'<p class="headline">{_e(section.headline)}</p>')
        if section.facts:
            parts.append('<ul class="facts">')
            for fact in section.facts:
                text = f'<span class="text">{_e(fact.text)}</span>'
                if link is not None:
                    text = f'<a href="{_e(link(index))}">{text}</a>'
                lines = "<br>".join(_e(line) for line in fact.detail.splitlines())
                detail = f'<br><span class="detail">{lines}</span>' if fact.detail else ""
                level = "warning" if fact.level is Level.WARNING else "info"
                level = "marked" if index in marked else level  # one class: Qt's rich text reads one
                parts.append(f'<li class="{level}">{text}{detail}</li>')
                index += 1
            parts.append("</ul>")
    if ov.notes:
        parts.append('<p class="notes">Not in this input: ' + "; ".join(_e(n) for n in ov.notes) + ".</p>")
    return "\n".join(parts)


def _table(head: Sequence[str], rows: Iterable[Sequence[object]], numeric: Iterable[int] = ()) -> str:
    numeric = set(numeric)
    out = ["<table><tr>" + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr>"]
    for row in rows:
        cells = "".join(f'<td class="num">{_e(c)}</td>' if i in numeric else f"<td>{_e(c)}</td>"
                        for i, c in enumerate(row))  # fmt: skip
        out.append(f"<tr>{cells}</tr>")
    return "\n".join(out) + "</table>"


def _break_table(session: Session) -> str:
    rows = []
    for i, row in enumerate(distinct_breaks(session, all_ranks=True), 1):
        eager = "—" if row.measured_ms is None else f"{row.measured_ms:.3f}"
        fix = row.first.hints[0] if row.first.hints else ""
        rows.append((i, row.gb_code or "—", where(row.location), row.count, row.graphs_split, row.ops_cut,
                     eager, first_line(row.reason, 400), fix))  # fmt: skip
    if not rows:
        return "<p>No graph breaks recorded.</p>"
    head = ("#", "Code", "Where", "Count", "Graphs split", "Ops cut", "Eager ms/step", "Reason", "Fix")
    return _table(head, rows, {0, 3, 4, 5, 6})


def _recompile_table(ov: Overview) -> str:
    section = ov.section("recompiles")
    if section is None or not section.facts:
        return "<p>No recompiles recorded.</p>"
    return _table(("Recompile", "Guard, origin and fix"), ((f.text, f.detail) for f in section.facts))


def _mode_table(session: Session) -> str:
    rows = session_mode_rows(session)
    if not rows:
        return "<p>Not timed.</p>"
    return _table(MODE_COLUMNS, (r.cells() for r in rows), set(range(1, len(MODE_COLUMNS))))


def _kernel_table(session: Session) -> str:
    timed = [m for m in session.mode_stats if m.time_by_ref]
    head = ["Compile", "Graph", "Kernel", "Language", "Launches", "Fused nodes",
            *(f"{m.mode} µs/step" for m in timed)]  # fmt: skip
    rows: list[tuple[str | int, ...]] = []
    for c in session.compiles:
        cid = c.compile_id if c.rank is None else f"rank {c.rank} {c.compile_id}"
        for o in c.inductor:
            for k in o.kernels:
                key = Ref.kernel(c.compile_id, o.graph, k.name, c.rank).encode()
                times = [m.time_by_ref.get(key) for m in timed]
                rows.append((cid, o.graph, k.name, k.language, k.launches or "", len(k.fused_nodes),
                             *("" if t is None else f"{t:.1f}" for t in times)))  # fmt: skip
    if not rows:
        return "<p>No generated kernels in this input.</p>"
    if timed:  # the most time first, where a step was profiled
        rows.sort(key=lambda r: -max((float(t) for t in r[6:] if t != ""), default=-1.0))  # µs texts
    more = len(rows) - MAX_KERNEL_ROWS
    note = f"<p class='notes'>… and {more:,} more kernels, not listed.</p>" if more > 0 else ""
    return _table(head, rows[:MAX_KERNEL_ROWS], {4, 5, *range(6, len(head))}) + note


def report_html(session: Session, ov: Overview) -> str:
    """The whole document."""
    meta = session.meta
    facts = [("input", ov.title or meta.origin_path), ("torch", meta.torch_version), ("device", meta.device),
             ("mode", meta.mode), ("ranks", ", ".join(map(str, meta.ranks)))]  # fmt: skip
    described = " · ".join(f"{k} {_e(v)}" for k, v in facts if v)
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        # nothing in this file may load anything: no scripts, no requests, even from a copy of it
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        f"<title>CompileScope report{': ' + _e(ov.title) if ov.title else ''}</title>",
        f"<style>{CSS}</style></head><body><main>",
        "<h1>CompileScope report</h1>",
        f'<p class="meta">{described}</p>',
        overview_fragment(ov),
        "<h2>Graph breaks, ranked by cost</h2>", _break_table(session),
        "<h2>Recompiles</h2>", _recompile_table(ov),
        "<h2>Step time per mode</h2>", _mode_table(session),
        "<h2>Kernels</h2>", _kernel_table(session),
        f"<footer>Written by CompileScope {_e(__version__)}. One file, no scripts and nothing loaded from "
        "elsewhere.</footer>",
        "</main></body></html>",
    ])  # fmt: skip


def write_report(session: Session, ov: Overview, path: str) -> None:
    """Write the report to `path` as sessions are written (atomically: a failed write leaves
    no half file); its folder must exist, as the CLI checks."""
    atomic_write_text(Path(path), report_html(session, ov), make_parent=False)
