"""Ranks that agree, grouped and written as people write them: "ranks 0-6, 8-15".

Given the differences (rank_divergence.py), two ranks are identical when they sit in the same
group of every difference; each set of identical ranks is a `RankGroup`, and the group outside
which no difference puts it (the largest, as the reference of each difference is) reads as
"identical", the others as "differs in graph 0/0, collectives 0/0".
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # rank_divergence imports ranks_text from here
    from compiler_core.ranks.rank_divergence import RankDifference


def ranks_text(ranks: Iterable[int], word: bool = False) -> str:
    """`0-6, 8-15`; with `word`, `ranks 0-6, 8-15` or `rank 7`."""
    rs = sorted(set(ranks))
    runs: list[str] = []
    i = 0
    while i < len(rs):
        j = i
        while j + 1 < len(rs) and rs[j + 1] == rs[j] + 1:
            j += 1
        runs.append(str(rs[i]) if i == j else f"{rs[i]}-{rs[j]}")
        i = j + 1
    text = ", ".join(runs)
    if not word:
        return text
    return f"rank {text}" if len(rs) == 1 else f"ranks {text}"


@dataclass(frozen=True)
class RankGroup:
    """Ranks identical to each other; `differs_in` names what sets them apart from the
    reference ranks (`graph 0/0`), empty for the reference group itself."""

    ranks: tuple[int, ...]
    differs_in: tuple[str, ...] = ()

    def text(self) -> str:
        who = ranks_text(self.ranks, word=True)
        if not self.differs_in:
            return f"{who} identical"
        left = len(self.differs_in) - 6
        shown = ", ".join(self.differs_in[:6]) + (f" (+{left} more)" if left > 0 else "")
        return f"{who} {'differ' if len(self.ranks) > 1 else 'differs'} in {shown}"

    def as_dict(self) -> dict[str, Any]:
        return {"ranks": ranks_text(self.ranks), "differs_in": list(self.differs_in)}


def rank_groups(ranks: Sequence[int], diffs: Sequence[RankDifference]) -> list[RankGroup]:
    """Ranks grouped by where they sit in every difference; the reference group first."""
    where: dict[int, tuple[int, ...]] = {}
    for r in ranks:
        where[r] = tuple(_group_index(d, r) for d in diffs)
    by_sig: dict[tuple[int, ...], list[int]] = {}
    for r in ranks:
        by_sig.setdefault(where[r], []).append(r)
    groups = []
    for sig, members in by_sig.items():
        differs = tuple(dict.fromkeys(
            f"{d.aspect} {d.compile_id}" for d, g in zip(diffs, sig, strict=True) if g > 0))
        groups.append(RankGroup(tuple(members), differs))
    groups.sort(key=lambda g: (len(g.differs_in) > 0, -len(g.ranks), g.ranks[0]))
    return groups


def groups_text(groups: Sequence[RankGroup]) -> str:
    """`ranks 0-6, 8-15 identical; rank 7 differs in graph 0/0, collectives 0/0`; with one group
    `ranks 0-15 identical`."""
    if not groups:
        return ""
    same = [g for g in groups if not g.differs_in]
    parts = []
    agreeing = [r for g in same for r in g.ranks]
    if len(agreeing) > 1 or (agreeing and len(groups) == 1):
        parts.append(f"{ranks_text(agreeing, word=True)} identical")
    elif agreeing:  # one rank against the others: it is only the one compared with
        parts.append(f"{ranks_text(agreeing, word=True)} as reference")
    parts += [g.text() for g in groups if g.differs_in]
    return "; ".join(parts)


def _group_index(diff: RankDifference, rank: int) -> int:
    """The index of `rank`'s group in `diff` (0: the reference), -1 if it has no value there."""
    for i, (ranks, _) in enumerate(diff.groups):
        if rank in ranks:
            return i
    return -1
