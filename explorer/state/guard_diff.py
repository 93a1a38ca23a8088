"""What changed in the guards between a compile and its recompile (why the recompile happened)."""

from __future__ import annotations

from compiler_core.session import Compile, Session


def previous_compile(session: Session, c: Compile) -> Compile | None:
    """The compile of the same frame just before `c` (frame_compile_id - 1, same rank)."""
    if c.frame_id is None or not c.frame_compile_id:
        return None
    wanted = (c.rank, c.frame_id, c.frame_compile_id - 1)
    for other in session.compiles:
        if (other.rank, other.frame_id, other.frame_compile_id) == wanted:
            return other
    return None


def guard_diff(before: Compile, after: Compile) -> list[str]:
    """`- guard` lines that no longer hold, `+ guard` lines that are new, in guard order."""
    old = [g.code for g in before.guards]
    new = [g.code for g in after.guards]
    old_set, new_set = set(old), set(new)
    return [f"- {g}" for g in old if g not in new_set] + [f"+ {g}" for g in new if g not in old_set]
