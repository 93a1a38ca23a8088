"""The readable form of a `SessionDiff`: what changed, most telling first, unchanged left out.

A totals table (only rows that changed, plus graphs and breaks always: "graphs 2 → 1" is the
line a user looks for), graph breaks and recompile causes gone and new, compiles on one side
only, then each matched compile with the stages that differ, compile time by stage and step
times per mode with their verdict against the noise. Long lists are cut at `LIST_LIMIT` items
with a count of the rest; the JSON form holds everything.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from compiler_core.diff.diff_result import BreakFact, Change, CompileDiff, GraphDiff, ModeDiff, SessionDiff

LIST_LIMIT = 8
_ALWAYS = ("graphs", "graph breaks")


def fmt(value: int | float | None) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 100 else f"{value:,.0f}"
    return f"{value:,}"


def change_text(c: Change) -> str:
    text = f"{fmt(c.before)} → {fmt(c.after)}"
    d = c.delta
    if d and c.before:
        text += f" ({d / c.before:+.0%})"
    return text


def _cut(items: Sequence[str], limit: int = LIST_LIMIT) -> list[str]:
    shown = list(items[:limit])
    if len(items) > limit:
        shown.append(f"… and {len(items) - limit} more")
    return shown


def _break_lines(title: str, facts: Sequence[BreakFact]) -> list[str]:
    if not facts:
        return []
    out = [title]
    for f in facts:
        where = f"{f.file.rsplit('/', 1)[-1]}:{f.line}" if f.file else "(unknown place)"
        count = f" ×{f.count}" if f.count > 1 else ""
        out.append(f"  {where}{count}: {f.reason}")
        if f.code:
            out.append(f"      {f.code}")
    return out


def session_text(diff: SessionDiff) -> str:
    out = [f"before: {diff.before.path or '(session)'}  torch {diff.before.torch_version or '?'} "
           f"{diff.before.device}".rstrip(),
           f"after:  {diff.after.path or '(session)'}  torch {diff.after.torch_version or '?'} "
           f"{diff.after.device}".rstrip(), ""]  # fmt: skip
    if diff.settings:
        out += ["settings:", *(f"  {c.name}  {c.before or '(not set)'} → {c.after or '(not set)'}"
                               for c in diff.settings), ""]
    rows = [c for c in diff.totals if c.changed or c.name in _ALWAYS]
    width = max((len(c.name) for c in rows), default=0)
    out += [f"{c.name.ljust(width)}  {change_text(c)}" for c in rows]
    if len(diff.groups) > 1:
        out.append("")
        out.append("ranks and runs: " + ", ".join(
            f"{'-' if g.rank is None else g.rank}/run {g.run + 1}: {g.compiles_before} → {g.compiles_after}"
            for g in diff.groups))  # fmt: skip
    for title, facts in (("graph breaks gone:", diff.breaks_removed),
                         ("graph breaks new:", diff.breaks_added)):  # fmt: skip
        lines = _break_lines(title, facts)
        out += ["", *lines] if lines else []
    for title, recs in (("recompiles gone:", diff.recompiles_removed),
                        ("recompiles new:", diff.recompiles_added)):  # fmt: skip
        if recs:
            out += ["", title]
            for r in recs:
                out.append(f"  {r.file.rsplit('/', 1)[-1]}:{r.line} {r.function} ×{r.count}: {r.guard}")
                if r.fix:
                    out.append(f"      fix: {r.fix}")
    for title, lone in (("compiles only before:", diff.only_before),
                        ("compiles only after:", diff.only_after)):  # fmt: skip
        if lone:
            out += ["", title]
            for c in lone:
                why = f"; recompiled: {c.recompile_reason}" if c.recompile_reason else ""
                brk = f"; breaks: {'; '.join(c.breaks)}" if c.breaks else ""
                out.append(f"  [{c.compile_id}] {c.frame}: {c.nodes} ops, {c.kernels} kernels{brk}{why}")
    for cd in diff.compiles:
        lines = compile_lines(cd)
        if lines:
            out += ["", *lines]
    stages = [c for c in diff.compile_s_by_stage if c.changed]
    if stages:
        out += ["", "compile time by stage (s):"]
        out += [f"  {c.name.ljust(9)} {change_text(c)}" for c in stages]
    if diff.modes:
        out += ["", "step time per mode:"]
        out += [f"  {mode_line(m)}" for m in diff.modes]
    if diff.left_to_fix:
        out += ["", "left to fix after:"]
        for row in diff.left_to_fix[:LIST_LIMIT]:
            times = f" ×{row.count}" if row.count > 1 else ""
            out.append(f"  {row.where}{times}: {row.kind}: {row.cause}")
            if row.code:
                out.append(f"      {row.code}")
            if row.hint is not None:
                out.append(f"      try: --apply {row.hint.as_arg()}  ({row.hint.in_words()})")
            elif row.advice:
                out.append(f"      {_first_line(row.advice)}")
        if len(diff.left_to_fix) > LIST_LIMIT:
            out.append(f"  … and {len(diff.left_to_fix) - LIST_LIMIT} more")
    return "\n".join(out).rstrip() + "\n"


def compile_lines(cd: CompileDiff) -> list[str]:
    """The lines of one matched compile; empty when nothing but its timings changed."""
    body: list[str] = []
    if cd.status[0] != cd.status[1]:
        body.append(f"  status {cd.status[0]} → {cd.status[1]}")
    if cd.recompile_before != cd.recompile_after:
        body.append(f"  recompiled because: {cd.recompile_before or '(first compile)'} → "
                    f"{cd.recompile_after or '(first compile)'}")  # fmt: skip
    body += ["  " + line for line in _break_lines("breaks gone:", cd.breaks_removed)]
    body += ["  " + line for line in _break_lines("breaks new:", cd.breaks_added)]
    if cd.guards_removed or cd.guards_added:
        body.append(f"  guards {change_text(cd.guards)}:")
        lines = guard_lines(cd.guards_removed, cd.guards_added)
        body += ["    " + line for line in _cut(lines, 2 * LIST_LIMIT)]
    for g in cd.graphs:
        body += graph_lines(g)
    s = cd.saved
    if s is not None and (s.tensors.changed or s.bytes.changed or s.recomputed.changed
                          or s.removed or s.added):  # fmt: skip
        body.append(f"  saved tensors {change_text(s.tensors)}, bytes {change_text(s.bytes)}, "
                    f"recomputed ops {change_text(s.recomputed)}")  # fmt: skip
        body += [f"    - {x}" for x in _cut(s.removed)] + [f"    + {x}" for x in _cut(s.added)]
        body += [f"    - recomputed {x}" for x in _cut(s.recomputed_removed)]
        body += [f"    + recomputed {x}" for x in _cut(s.recomputed_added)]
    for k in cd.kernels:
        if not (k.removed or k.added or k.kernels.changed or k.cudagraph_before != k.cudagraph_after):
            continue
        body.append(f"  kernels ({k.partition}) {change_text(k.kernels)}, "
                    f"extern calls {change_text(k.extern_calls)}")  # fmt: skip
        body += [f"    - {n}{_us(k.us_before.get(n))}" for n in _cut(k.removed)]
        body += [f"    + {n}{_us(k.us_after.get(n))}" for n in _cut(k.added)]
        body += [f"    {'refused' if w.to_extern else 'generated'}: {w.op} "
                 f"({w.before} → {w.after})" for w in k.swaps]  # fmt: skip
        if k.cudagraph_before != k.cudagraph_after:
            before, after = (_first_line(x) or "not known" for x in (k.cudagraph_before, k.cudagraph_after))
            body.append(f"    CUDA graph: {before} → {after}")
    if not body:
        return []
    total = cd.compile_s[0] if cd.compile_s else None
    time = f", compile {change_text(total)} s" if total is not None and total.changed else ""
    ids = cd.before if cd.before == cd.after else f"{cd.before} → {cd.after}"
    rank = f" rank {cd.rank}" if cd.rank is not None else ""
    return [f"[{ids}]{rank} {cd.frame}{time}", *body]


def _first_line(text: str) -> str:
    return text.splitlines()[0].rstrip() if text else ""


def guard_lines(removed: Sequence[str], added: Sequence[str]) -> list[str]:
    """`- guard` and `+ guard` lines, each new guard right after the old one about the same
    thing (`check_tensor(L['x']`: `size=[2, 8]` → `size=[None, 8]`), the rest after."""
    by_subject: dict[str, list[int]] = {}
    for i, g in enumerate(added):
        by_subject.setdefault(g.split(", ", 1)[0], []).append(i)
    used: set[int] = set()
    out = []
    for g in removed:
        out.append(f"- {g}")
        mine = [i for i in by_subject.get(g.split(", ", 1)[0], ()) if i not in used][:1]
        for i in mine:
            used.add(i)
            out.append(f"+ {added[i]}")
    return out + [f"+ {g}" for i, g in enumerate(added) if i not in used]


def _us(v: float | None) -> str:
    return "" if v is None else f"  {v:.1f} µs/step"


def graph_lines(g: GraphDiff) -> list[str]:
    if g.same:
        return []
    head = f"  {g.stage} graph: {g.nodes_before} → {g.nodes_after} nodes"
    parts = [f"-{len(g.removed)}" if g.removed else "", f"+{len(g.added)}" if g.added else "",
             f"~{len(g.changed)} changed" if g.changed else ""]  # fmt: skip
    out = [head + " (" + ", ".join(p for p in parts if p) + ")"]
    ops = _ops("-", g.ops_removed) + _ops("+", g.ops_added)
    if ops:
        out.append("    ops: " + ", ".join(ops))
    out += [f"    ~ {c.before}{'' if c.before == c.after else ' → ' + c.after}: {'; '.join(c.what)}"
            for c in g.changed[:LIST_LIMIT]]  # fmt: skip
    if len(g.changed) > LIST_LIMIT:
        out.append(f"    … and {len(g.changed) - LIST_LIMIT} more changed")
    return out


def _ops(sign: str, counts: dict[str, int]) -> list[str]:
    return [f"{sign}{op}" + (f" ×{n}" if n > 1 else "") for op, n in _first(counts.items())]


def _first(items: Iterable[tuple[str, int]]) -> list[tuple[str, int]]:
    return sorted(items, key=lambda kv: (-kv[1], kv[0]))[:LIST_LIMIT]


def mode_line(m: ModeDiff) -> str:
    text = f"{m.mode}: {fmt(m.step_ms.before)} → {fmt(m.step_ms.after)} ms"
    if m.change is not None:
        text += f" ({m.change:+.1%})"
    if m.beyond_noise is None:
        text += ", noise unknown (a run without a spread)" if m.change is not None else ""
    elif m.beyond_noise:
        text += f", beyond the noise (±{m.noise:.1%})"
    else:
        text += f", within the noise (±{m.noise:.1%}): not a real change"
    return text
