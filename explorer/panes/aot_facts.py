"""What the AOT pane says about one forward op: backward partners, saved or recomputed (Qt-free).

Everything here is read from the session (`AotInfo.backward_of`/`backward_via`/`recomputed`,
saved tensors); nothing is inferred at view time. The wording of each partner rule says how
exact it is, so an imported log without `seq_nr` says so instead of looking exact.
"""

from __future__ import annotations

from html import escape

from compiler_core.session.model import AotInfo, BudgetPoint
from explorer.panes.number_text import human_bytes

VIA_TEXT = {
    "seq_nr": "same autograd seq_nr (exact)",
    "original_aten": "seq_nr lost in a joint-graph rewrite; paired by original ATen op",
    "via_user": "its own backward was folded away; gradient computed by its users' backward ops",
    "source_line": "this log carries no seq_nr: paired by source line and layer order (approximate)",
}


def _names(names: list[str], limit: int = 8) -> str:
    """Names for the rich-text detail label: escaped (they come from the session)."""
    shown = ", ".join(escape(n) for n in names[:limit])
    return shown + (f" … (+{len(names) - limit})" if len(names) > limit else "")


def forward_op_facts(aot: AotInfo, name: str) -> str:
    """One paragraph (rich text, every session string escaped) for forward node `name`: partners,
    rule, and the fate of its value."""
    partners = list(aot.backward_of.get(name, ()))
    via = aot.backward_via.get(name, "")
    lines = [f"<b>{escape(name)}</b>"]
    if partners:
        rule = VIA_TEXT.get(via, via)
        lines.append(f"backward partners ({len(partners)}): {_names(partners)} <i>[{escape(rule)}]</i>")
    else:
        lines.append("no backward partner (no gradient flows through it, or the log cannot tell)")
    recomputed = set(aot.recomputed)
    saved = [t for t in aot.saved_tensors if t.producer == name]
    if name in recomputed:
        lines.append("its value: <b>♻ recomputed</b> in the backward, not saved")
    elif saved:
        kept = ", ".join(f"{escape(t.name)} ({human_bytes(t.bytes)})" for t in saved)
        lines.append(f"its value: <b>saved</b> as {kept}")
    else:
        lines.append("its value: not needed by the backward")
    wanted = set(partners)
    reads = [t for t in aot.saved_tensors if not wanted.isdisjoint(t.consumers)]
    if reads:
        read = _names([f"{t.name} ({human_bytes(t.bytes)})" for t in reads])
        lines.append(f"its backward reads saved: {read}")
    rec_inputs = sorted(recomputed & _inputs_of(aot, wanted))
    if rec_inputs:
        lines.append("and recomputed: ♻ " + _names(rec_inputs))
    return "<br>".join(lines)


def _inputs_of(aot: AotInfo, wanted: set[str]) -> set[str]:
    """Every input of the backward nodes named in `wanted` (one walk of the backward graph)."""
    if aot.backward is None:
        return set()
    return {i for n in aot.backward.nodes if n.name in wanted for i in n.inputs}


def recompute_summary(aot: AotInfo) -> str:
    if not aot.recomputed:
        return "0 recomputed nodes"
    return (f"♻ {len(aot.recomputed)} recomputed nodes in the backward "
            f"(avoid saving {human_bytes(aot.recomputed_bytes)})")


def log_cannot_tell(aot: AotInfo) -> bool:
    """True when partners came only from source lines (a torch trace log without seq_nr)."""
    return bool(aot.backward_via) and all(v in ("source_line", "via_user") for v in aot.backward_via.values())


BUDGET_COLUMNS = ["Budget", "Saved", "Saved tensors", "Recomputed ops", "Step (ms)", "Peak memory"]


def budget_row(p: BudgetPoint) -> list[str]:
    if p.error:
        return [f"{p.budget:g}", p.error, "", "", "", ""]
    return [
        f"{p.budget:g}", human_bytes(p.saved_bytes), str(p.saved_tensors), str(p.recomputed),
        "—" if p.step_ms is None else f"{p.step_ms:.2f}",
        "—" if p.peak_mem_bytes is None else human_bytes(p.peak_mem_bytes),
    ]
