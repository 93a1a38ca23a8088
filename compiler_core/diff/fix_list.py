"""What is left to fix in a session, one row per cause: the hint to apply and re-run where it is
mechanical (hint_plan.py), else the exact line and the edit to make by hand.

Rows follow break_ranking's and recompile_explain's order (most costly first), so after a
re-run the comparison window shows, for the new session, the next thing to try.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from compiler_core.break_ranking import distinct_breaks
from compiler_core.diff.hint_plan import Hint, hint_for_break, hint_for_recompile, plan_for
from compiler_core.recompile_explain import distinct_recompiles
from compiler_core.session.model import Session


@dataclass(frozen=True)
class FixRow:
    """`kind` is `break` or `recompile`; `hint` is set (and has a plan) only where a re-run can
    apply it; `advice` is the edit in words otherwise (Dynamo's own hints for a break)."""

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
        return f"{os.path.basename(self.file)}:{self.line}" if self.file else "(unknown place)"


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
