"""Which compile of one session is which compile of the other: by frame and code, never by id.

Compile ids are Dynamo's counters: fixing a graph break removes a resume frame and renumbers
every frame after it, so `3/0` before and `3/0` after are often different functions. A
compile is keyed instead by where its frame's code is (file name, function, first line) within
its rank and run, and the compiles of one frame pair in the order Dynamo made them (the first
compile with the first, a recompile with a recompile).

Files are compared by base name: two runs of one model on two machines (or two checkouts) name
the same file by different absolute paths. Lines move when a user edits the file, so compiles
left over after the exact pass pair on (file, function) alone, and resume functions
(`torch_dynamo_resume_in_forward_at_26`, whose name holds the line they resume at) on the
function they resume; among several candidates the nearest first line wins.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from compiler_core.session.model import Compile

_RESUME = re.compile(r"^(torch_dynamo_resume_in_.+?)_at_\d+$")


@dataclass(frozen=True)
class FrameKey:
    file: str  # base name
    function: str
    line: int

    def shown(self) -> str:
        if not self.file and not self.function:
            return "(unknown frame)"
        return f"{self.file}:{self.line} {self.function}".strip()


@dataclass(frozen=True)
class CompileMatch:
    pairs: tuple[tuple[Compile, Compile], ...]
    only_before: tuple[Compile, ...]
    only_after: tuple[Compile, ...]


def frame_key(c: Compile) -> FrameKey:
    """Where `c`'s frame is: its code location, else what its compile metrics name."""
    if c.code is not None and (c.code.file or c.code.function):
        return FrameKey(os.path.basename(c.code.file), c.code.function, c.code.line)
    m = c.metrics
    return FrameKey(os.path.basename(m.co_filename), m.co_name, m.co_firstlineno or 0)


def group_of(c: Compile) -> tuple[int, int]:
    """(rank, run): rank None sorts as -1 so a single-process log and rank 0 stay apart."""
    return (-1 if c.rank is None else c.rank, c.run)


def match_compiles(before: Sequence[Compile], after: Sequence[Compile]) -> CompileMatch:
    """Pairs in `before`'s order; the leftovers of each side in their own order."""
    left = list(before)
    right = list(after)
    taken_l: set[int] = set()
    taken_r: set[int] = set()
    pairs: list[tuple[int, int]] = []
    passes: tuple[Callable[[Compile], tuple[object, ...]], ...] = (
        lambda c: (group_of(c), frame_key(c)),
        lambda c: (group_of(c), frame_key(c).file, frame_key(c).function),
        lambda c: (group_of(c), frame_key(c).file, _resumed(frame_key(c).function)),
    )
    for key in passes:
        free_l = [i for i in range(len(left)) if i not in taken_l]
        free_r = [j for j in range(len(right)) if j not in taken_r]
        for i, j in _pair_by(key, left, right, free_l, free_r):
            taken_l.add(i)
            taken_r.add(j)
            pairs.append((i, j))
    pairs.sort()
    return CompileMatch(
        pairs=tuple((left[i], right[j]) for i, j in pairs),
        only_before=tuple(c for i, c in enumerate(left) if i not in taken_l),
        only_after=tuple(c for j, c in enumerate(right) if j not in taken_r),
    )


def _resumed(function: str) -> str:
    m = _RESUME.match(function)
    return m.group(1) if m else function


def _order(c: Compile) -> tuple[int, int, int, int]:
    """Dynamo's own order within a frame: its compile counter, then its restart attempt."""
    return (frame_key(c).line, c.frame_compile_id or 0, c.attempt, c.frame_id or 0)


def _pair_by(
    key: Callable[[Compile], tuple[object, ...]],
    left: Sequence[Compile],
    right: Sequence[Compile],
    free_l: Iterable[int],
    free_r: Iterable[int],
) -> list[tuple[int, int]]:
    """Within each key, pair in Dynamo's order; where the counts differ, a compile pairs with
    the other side's compile at the nearest first line first (ties: in order)."""
    groups_l: dict[tuple[object, ...], list[int]] = defaultdict(list)
    groups_r: dict[tuple[object, ...], list[int]] = defaultdict(list)
    for i in free_l:
        groups_l[key(left[i])].append(i)
    for j in free_r:
        groups_r[key(right[j])].append(j)
    out: list[tuple[int, int]] = []
    for k, ls in groups_l.items():
        rs = groups_r.get(k)
        if not rs:
            continue
        ls = sorted(ls, key=lambda i: _order(left[i]))
        rs = sorted(rs, key=lambda j: _order(right[j]))
        if len(ls) == len(rs):
            out.extend(zip(ls, rs, strict=True))
            continue
        used: set[int] = set()
        for i in ls:
            line = frame_key(left[i]).line
            free = [j for j in rs if j not in used]
            if not free:
                break
            j = min(free, key=lambda j: (abs(frame_key(right[j]).line - line), _order(right[j])))
            used.add(j)
            out.append((i, j))
    return out
