"""What differs between the ranks of one job: `rank_divergence(session)`, empty when all agree.

Ranks of a data-parallel job run the same script, so each compile id should exist on every rank
with the same graph, breaks, guards, cache outcome and collectives. A rank that compiles
something else, breaks or recompiles alone, or issues its collectives in another order hangs or
slows the whole job, and is the hardest thing to spot in N separate logs.

For every compile id (across runs of the log: `0/0#2` is its own id) each rank gets one value
per aspect (`ASPECTS`); ranks with equal values form a group, and an aspect with more than one
group is a `RankDifference`. The largest group is the reference (ties: the one holding the
lowest rank), so "rank 7 differs" reads against the ranks that agree, as a user would say it.
Values that vary between processes without meaning anything (object ids and addresses in
guards and reasons) are normalised before comparing.

Cost: one pass over the compiles and one structural hash per Dynamo graph; graph walks only
for the pairs that differ (64 ranks of a 32-layer model: see bench/rank_compare.py).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from compiler_core.analysis.aot_splits import ddp_pieces
from compiler_core.ranks.collectives import compile_collectives
from compiler_core.ranks.graph_hash import first_difference, structural_hash
from compiler_core.ranks.rank_sets import ranks_text
from compiler_core.session.model import Compile, Session

# in the order a user reads them: what was compiled, then how, then what it runs
ASPECTS = ("compiles", "status", "graph", "breaks", "recompiles", "guards", "cache", "splits", "collectives")
_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_LONG_NUMBER = re.compile(r"\b\d{6,}\b")  # ids of objects and types: differ in every process
_DEVICE_INDEX = re.compile(r"(device=|index=|cuda:)\d+")  # each rank on its own device: expected


@dataclass(frozen=True)
class RankDifference:
    """One aspect of one compile id on which ranks disagree.

    `groups`: (ranks, what they have) for each distinct value, the reference group first.
    `detail`: one sentence comparing the first rank of each other group with the reference."""

    aspect: str
    compile_id: str
    groups: tuple[tuple[tuple[int, ...], str], ...]
    detail: str

    @property
    def ranks(self) -> tuple[int, ...]:
        """The ranks outside the reference group: those that differ."""
        return tuple(sorted(r for ranks, _ in self.groups[1:] for r in ranks))

    def as_dict(self) -> dict[str, Any]:
        return {
            "aspect": self.aspect,
            "compile_id": self.compile_id,
            "ranks": list(self.ranks),
            "groups": [{"ranks": ranks_text(r), "value": v} for r, v in self.groups],
            "detail": self.detail,
        }

    def text(self) -> str:
        return f"{self.compile_id} {self.aspect}: {self.detail}"


def session_ranks(session: Session) -> tuple[int, ...]:
    """Every rank the session knows: its meta's and those its compiles carry."""
    return tuple(sorted(set(session.meta.ranks) | {c.rank for c in session.compiles if c.rank is not None}))


def compiles_by_rank(session: Session) -> dict[int, dict[str, Compile]]:
    out: dict[int, dict[str, Compile]] = {r: {} for r in session_ranks(session)}
    for c in session.compiles:
        if c.rank is not None:
            out[c.rank].setdefault(c.compile_id, c)
    return out


def rank_divergence(session: Session) -> list[RankDifference]:
    """Every aspect of every compile id on which ranks disagree; [] when they all agree (or the
    session has fewer than two ranks)."""
    by_rank = compiles_by_rank(session)
    ranks = tuple(by_rank)
    if len(ranks) < 2:
        return []
    ids = list(dict.fromkeys(c.compile_id for c in session.compiles if c.rank is not None))
    out: list[RankDifference] = []
    memo: dict[tuple[str, Any], Any] = {}  # values by the text they come from: ranks share most
    for cid in ids:
        present = tuple(r for r in ranks if cid in by_rank[r])
        if len(present) < len(ranks):
            absent = tuple(r for r in ranks if r not in present)
            groups = _ordered({present: "compiled", absent: "not compiled"})
            first = by_rank[present[0]][cid]
            out.append(RankDifference("compiles", cid, groups, _presence_detail(groups, first)))
        compiles = {r: by_rank[r][cid] for r in present}
        for aspect in ASPECTS[1:]:
            diff = _aspect_difference(aspect, cid, compiles, memo)
            if diff is not None:
                out.append(diff)
    return out


def _aspect_difference(aspect: str, cid: str, compiles: dict[int, Compile],
                       memo: dict[tuple[str, Any], Any]) -> RankDifference | None:  # fmt: skip
    value_of, describe = _ASPECT_FUNCS[aspect]
    by_value: dict[Any, list[int]] = {}
    for r, c in compiles.items():
        key = _source_text(aspect, c)
        if key is None:
            value = value_of(c)
        elif (aspect, key) in memo:
            value = memo[(aspect, key)]
        else:
            value = memo[(aspect, key)] = value_of(c)
        by_value.setdefault(value, []).append(r)
    if len(by_value) < 2:
        return None
    if aspect == "splits" and all(fw <= 1 for fw, _ in by_value):
        return None  # no rank split a graph: partition counts follow status, said there
    shown = {tuple(rs): _value_text(aspect, v) for v, rs in by_value.items()}
    groups = _ordered(shown)
    ref = groups[0][0][0]
    details = [describe(compiles[ref], compiles[g[0]], ref, g[0]) for g, _ in groups[1:]]
    return RankDifference(aspect, cid, groups, "; ".join(details))


def _source_text(aspect: str, c: Compile) -> Any:
    """The text a value is computed from, where equal texts give equal values: the graph's
    readable text for its structure, the post-grad texts for its collectives (64 ranks of a
    32-layer model hash one graph, not 64). None: compute it."""
    if aspect == "graph" and c.dynamo_graph is not None and c.dynamo_graph.text:
        return c.dynamo_graph.text
    if aspect == "collectives" and c.inductor and all(o.post_grad is not None and o.post_grad.text
                                                      for o in c.inductor):  # fmt: skip
        return tuple(o.post_grad.text for o in c.inductor if o.post_grad is not None)
    return None


def _ordered(groups: dict[tuple[int, ...], str]) -> tuple[tuple[tuple[int, ...], str], ...]:
    """Largest group first (ties: the one with the lowest rank), then by lowest rank."""
    items = [(tuple(sorted(rs)), v) for rs, v in groups.items() if rs]
    items.sort(key=lambda g: (-len(g[0]), g[0][0]))
    return tuple(items)


def _presence_detail(groups: tuple[tuple[tuple[int, ...], str], ...], present: Compile) -> str:
    """Who compiled it and who did not, and what it is where it exists: a recompile (with its
    reason) or a frame with breaks."""
    text = "; ".join(f"{ranks_text(rs, word=True)}: {v}" for rs, v in groups)
    if present.recompile_reasons:
        text += f"; a recompile: {normalised(present.recompile_reasons[0])[:200]}"
    if present.graph_breaks:
        text += f"; it breaks: {normalised(present.graph_breaks[0].reason)[:200]}"
    return text


@functools.lru_cache(maxsize=1 << 16)
def normalised(text: str) -> str:
    """`text` with process-specific ids and addresses blanked, first line only."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    return _DEVICE_INDEX.sub(r"\1N", _LONG_NUMBER.sub("N", _ADDRESS.sub("0x?", first)))


# -- one value per rank and aspect, and how two ranks' values differ ---------------------------

def _status(c: Compile) -> str:
    return str(c.status)


def _graph(c: Compile) -> str:
    return structural_hash(c.dynamo_graph) if c.dynamo_graph is not None else ""


def _breaks(c: Compile) -> tuple[str, ...]:
    return tuple(normalised(b.reason) for b in c.graph_breaks)


def _recompiles(c: Compile) -> tuple[str, ...]:
    return tuple(normalised(r) for r in c.recompile_reasons)


def _guards(c: Compile) -> frozenset[str]:
    return frozenset(normalised(g.code) for g in c.guards)


def _cache(c: Compile) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(c.metrics.cache.items()))


def _splits(c: Compile) -> tuple[int, int]:
    """(forward or inference graphs, backward graphs) Inductor compiled for this one compile id:
    more than one is DDPOptimizer splitting the graph at bucket boundaries."""
    fw = ddp_pieces(c)
    return (fw, len(c.inductor) - fw)


def _collectives(c: Compile) -> tuple[Any, ...]:
    return tuple(x.key() for x in compile_collectives(c))


def _value_text(aspect: str, value: Any) -> str:
    if aspect == "graph":
        return f"graph {value}" if value else "no graph"
    if aspect in ("breaks", "recompiles"):
        noun = "break" if aspect == "breaks" else "recompile reason"
        return f"{len(value)} {noun}{'s' * (len(value) != 1)}" + (f": {value[0][:80]}" if value else "")
    if aspect == "guards":
        return f"{len(value)} guards"
    if aspect == "cache":
        return ", ".join(f"{k} {v}" for k, v in value) or "no cache record"
    if aspect == "splits":
        return f"{value[0]} forward + {value[1]} backward graphs"
    if aspect == "collectives":
        ops = f": {', '.join(op for op, _, _ in value[:4])}" if value else ""
        return f"{len(value)} collective{'s' * (len(value) != 1)}{ops}"
    return str(value)


def _who(rank: int) -> str:
    return f"rank {rank}"


def _status_detail(a: Compile, b: Compile, ra: int, rb: int) -> str:
    def one(c: Compile, r: int) -> str:
        failure = c.failure or c.metrics.fail_reason
        why = f" ({normalised(failure)[:120]})" if failure else ""
        return f"{_who(r)} {c.status}{why}"

    return f"{one(b, rb)} where {one(a, ra)}"


def _graph_detail(a: Compile, b: Compile, ra: int, rb: int) -> str:
    if a.dynamo_graph is None or b.dynamo_graph is None:
        has = rb if b.dynamo_graph is not None else ra
        return f"only {_who(has)} has a Dynamo graph"
    diff = first_difference(b.dynamo_graph, a.dynamo_graph)
    return diff.describe(_who(rb), _who(ra)) if diff is not None else "the graphs agree node by node"


def _listed_detail(what: str, value_of: Callable[[Compile], Sequence[str]]) -> Callable[..., str]:
    def detail(a: Compile, b: Compile, ra: int, rb: int) -> str:
        va, vb = list(value_of(a)), list(value_of(b))
        extra = [x for x in vb if x not in va]
        missing = [x for x in va if x not in vb]
        parts = [f"{_who(rb)} has {len(vb)} {what}{'s' * (len(vb) != 1)}, {_who(ra)} {len(va)}"]
        for who, only in ((rb, extra), (ra, missing)):
            if only:
                parts.append(f"only {_who(who)}: {only[0][:160]}" + _more(len(only) - 1))
        return "; ".join(parts)

    return detail


def _more(n: int) -> str:
    return f" (+{n} more)" if n > 0 else ""


def _guards_detail(a: Compile, b: Compile, ra: int, rb: int) -> str:
    return _listed_detail("guard", lambda c: sorted(_guards(c)))(a, b, ra, rb)


def _cache_detail(a: Compile, b: Compile, ra: int, rb: int) -> str:
    return f"{_who(rb)}: {_value_text('cache', _cache(b))}; {_who(ra)}: {_value_text('cache', _cache(a))}"


def _splits_detail(a: Compile, b: Compile, ra: int, rb: int) -> str:
    return (f"{_who(rb)} compiled {_value_text('splits', _splits(b))}, {_who(ra)} "
            f"{_value_text('splits', _splits(a))} (DDPOptimizer splits at bucket boundaries)")


def _collectives_detail(a: Compile, b: Compile, ra: int, rb: int) -> str:
    xa, xb = compile_collectives(a), compile_collectives(b)
    for i in range(max(len(xa), len(xb))):
        ka = xa[i].key() if i < len(xa) else None
        kb = xb[i].key() if i < len(xb) else None
        if ka != kb:
            theirs = xb[i].describe() if i < len(xb) else "nothing more"
            ours = xa[i].describe() if i < len(xa) else "nothing more"
            return (f"{_who(rb)} diverges at collective #{i}: issues {theirs} where {_who(ra)} issues {ours} "
                    f"({len(xb)} collectives against {len(xa)})")
    return f"{_who(rb)} and {_who(ra)} issue the same collectives"


_ASPECT_FUNCS: dict[str, tuple[Callable[[Compile], Any], Callable[[Compile, Compile, int, int], str]]] = {
    "status": (_status, _status_detail),
    "graph": (_graph, _graph_detail),
    "breaks": (_breaks, _listed_detail("break", _breaks)),
    "recompiles": (_recompiles, _listed_detail("recompile reason", _recompiles)),
    "guards": (_guards, _guards_detail),
    "cache": (_cache, _cache_detail),
    "splits": (_splits, _splits_detail),
    "collectives": (_collectives, _collectives_detail),
}
