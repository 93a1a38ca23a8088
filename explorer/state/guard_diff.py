"""What changed in the guards between a compile and its recompile (why the recompile happened)."""

from __future__ import annotations

import re

from compiler_core.session import Compile, Session


def previous_compile(session: Session, c: Compile) -> Compile | None:
    """The compile of the same frame just before `c` (frame_compile_id - 1, same rank and run)."""
    if c.frame_id is None or not c.frame_compile_id:
        return None
    wanted = (c.rank, c.run, c.frame_id, c.frame_compile_id - 1)
    for other in session.compiles:
        if (other.rank, other.run, other.frame_id, other.frame_compile_id) == wanted:
            return other
    return None


# Dynamo numbers the globals it installs per compile (`G['__builtins_dict___0']` in [0/0],
# `___2` in [0/1]): 36 of the 47 lines of a recompile's diff were that renumbering alone.
_RENUMBERED = re.compile(r"___\d+\b")


def _same(code: str) -> str:
    return _RENUMBERED.sub("___#", code)


def _subject(code: str) -> str:
    """What a guard is about: `check_tensor(L['args'][0]`, `L['x'].size()[1]`."""
    return _same(code).split(", ", 1)[0]


def guard_diff(before: Compile, after: Compile) -> list[str]:
    """`- guard` lines that no longer hold, `+ guard` lines that are new, in guard order; a
    renumbered global is no change, and a guard's new form follows its old one (the one real
    change, `size=[1, 8]` → `[1, None]`, was 20 lines away from its pair)."""
    old = [g.code for g in before.guards]
    new = [g.code for g in after.guards]
    old_keys, new_keys = {_same(g) for g in old}, {_same(g) for g in new}
    removed = [g for g in old if _same(g) not in new_keys]
    added = [g for g in new if _same(g) not in old_keys]
    by_subject: dict[str, list[int]] = {}
    for i, g in enumerate(added):
        by_subject.setdefault(_subject(g), []).append(i)
    paired: set[int] = set()
    out = []
    for g in removed:
        out.append(f"- {g}")
        free = [i for i in by_subject.get(_subject(g), ()) if i not in paired][:1]
        for i in free:
            paired.add(i)
            out.append(f"+ {added[i]}")
    return out + [f"+ {g}" for i, g in enumerate(added) if i not in paired]
