"""What is left to fix in a session, one row per cause: the hint to apply and re-run where it is
mechanical (hint_plan.py), else the exact line and the edit to make by hand.

Rows follow break_ranking's and recompile_explain's order (most costly first), so after a
re-run the comparison window shows, for the new session, the next thing to try.

`lever_rows` are not causes but trade-offs worth trying: a training capture whose forward saves
activations for backward can re-run at a lower `activation_memory_budget` (recompute more, save
less). They stay out of `fix_rows`, so "nothing left to fix" still means no break and no recompile.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from compiler_core.diff.hint_plan import Hint, hint_for_break, hint_for_recompile, plan_for
from compiler_core.queries.break_ranking import distinct_breaks
from compiler_core.queries.recompile_explain import distinct_recompiles
from compiler_core.queries.summary import aot_saved_bytes
from compiler_core.session.model import Session

BUDGET_KEY = "functorch.activation_memory_budget"  # how a capture's meta records a re-run's budget


@dataclass(frozen=True)
class FixRow:
    """`kind` is `break`, `recompile` or (a lever, not a cause) `memory`; `hint` is set (and has a
    plan) only where a re-run can apply it; `advice` is the edit in words otherwise (Dynamo's own
    hints for a break)."""

    kind: str
    cause: str
    file: str = ""
    line: int = 0
    code: str = ""
    count: int = 1
    hint: Hint | None = None
    advice: str = ""

    @property
    def where(self) -> str:
        if not self.file:
            return "(unknown place)"
        return f"{os.path.basename(self.file)}:{self.line}" if self.line else os.path.basename(self.file)


def fix_rows(session: Session) -> list[FixRow]:
    rows = []
    for b in distinct_breaks(session, all_ranks=True):
        hint = hint_for_break(b.first)
        loc = b.location
        rows.append(FixRow(
            kind="break", cause=b.reason, file=loc.file if loc else "", line=loc.line if loc else 0,
            code=loc.code if loc else "", count=b.count,
            hint=hint if hint is not None and plan_for(hint) is not None else None,
            advice="\n".join(b.first.hints) or b.first.explanation,
        ))  # fmt: skip
    for r in distinct_recompiles(session, all_ranks=True):
        hint = hint_for_recompile(r.guard)
        rows.append(FixRow(
            kind="recompile", cause=r.in_words(), file=r.file, line=r.line, code="", count=r.count,
            hint=hint if hint is not None and plan_for(hint) is not None else None, advice=r.fix,
        ))  # fmt: skip
    return rows


def session_hints(session: Session) -> list[Hint]:
    """Every mechanical hint the session's breaks and recompiles name, in `fix_rows` order, once."""
    out: list[Hint] = []
    for row in fix_rows(session):
        if row.hint is not None and row.hint not in out:
            out.append(row.hint)
    return out


def lever_rows(session: Session) -> list[FixRow]:
    """The memory-budget lever of a training capture that saves activations for backward: half
    the budget it ran with (1.0, torch's default, unless a re-run set one), down to 0."""
    compiles = [c for c in session.compiles if c.aot is not None and c.aot.backward is not None]
    saved = sum(aot_saved_bytes(c.aot) for c in compiles)
    tensors = sum(len(c.aot.saved_tensors) for c in compiles if c.aot is not None)
    if not saved:
        return []
    try:
        current = float(session.meta.extra.get(BUDGET_KEY, "1.0"))
    except ValueError:
        return []
    if current <= 0.0:
        return []
    lower = current / 2 if current / 2 >= 0.01 else 0.0
    hint = Hint("activation_memory_budget", value=f"{lower:g}")
    if plan_for(hint) is None:
        return []
    return [FixRow(
        kind="memory", cause=f"{tensors} tensors, {saved:,} bytes saved for backward at budget {current:g}",
        file=session.meta.origin_path, hint=hint,
        advice="a lower budget recomputes more in backward to save less: compare saved bytes and step time",
    )]  # fmt: skip
