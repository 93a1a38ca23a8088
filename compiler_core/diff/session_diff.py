"""`diff_sessions(before, after)`: the whole comparison of two sessions (from logs or captures).

Session totals first (what a user checks after a fix: graphs 12 → 1, breaks 11 → 0), then the
distinct graph breaks and recompile causes that went or came, each compile matched to its
counterpart (compile_match.py) and diffed stage by stage (stage_diff.py), compile time summed
per stage, and step times per mode, with whether the change stands out of the two runs' noise.

Needs no torch: sessions from a log made elsewhere compare as well as fresh captures.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable

from compiler_core.diff.compile_match import frame_key, group_of, match_compiles
from compiler_core.diff.diff_result import (
    BreakFact,
    Change,
    GroupMatch,
    LoneCompile,
    ModeDiff,
    RecompileFact,
    SessionDiff,
    SettingChange,
    SideInfo,
)
from compiler_core.diff.fix_list import fix_rows
from compiler_core.diff.stage_diff import STAGES, break_fact, break_identity, compile_diff, timed_total
from compiler_core.queries.break_ranking import distinct_breaks
from compiler_core.queries.recompile_explain import distinct_recompiles
from compiler_core.queries.step_stats import shown_stats
from compiler_core.queries.summary import kernel_counts, saved_bytes
from compiler_core.session.model import Compile, ModeStats, Session


def diff_sessions(before: Session, after: Session) -> SessionDiff:
    match = match_compiles(before.compiles, after.compiles)
    us = (_kernel_times(before), _kernel_times(after))
    breaks_removed, breaks_added = _break_changes(before, after)
    recompiles_removed, recompiles_added = _recompile_changes(before, after)
    return SessionDiff(
        before=_side(before),
        after=_side(after),
        settings=setting_changes(before, after),
        totals=_totals(before, after),
        groups=_groups(before.compiles, after.compiles),
        compiles=tuple(compile_diff(a, b, us) for a, b in match.pairs),
        only_before=tuple(_lone(c) for c in match.only_before),
        only_after=tuple(_lone(c) for c in match.only_after),
        breaks_removed=breaks_removed,
        breaks_added=breaks_added,
        recompiles_removed=recompiles_removed,
        recompiles_added=recompiles_added,
        compile_s_by_stage=_stage_seconds(before.compiles, after.compiles),
        modes=_modes(shown_stats(before), shown_stats(after)),
        left_to_fix=tuple(fix_rows(after)),
    )


# recorded in meta.extra but not a compile setting: where the run happened, not what it compiled
_NOT_SETTINGS = frozenset({"memory_cap"})


def _settings(s: Session) -> dict[str, str]:
    out = {k: str(v) for k, v in s.meta.extra.items() if k not in _NOT_SETTINGS}
    out["mode"] = s.meta.mode or ""
    out["dynamic"] = "" if s.meta.dynamic is None else str(s.meta.dynamic)
    return out


def setting_changes(before: Session, after: Session) -> tuple[SettingChange, ...]:
    """What the two runs were told differently: a before/after is read against these first."""
    a, b = _settings(before), _settings(after)
    return tuple(SettingChange(k, a.get(k, ""), b.get(k, "")) for k in sorted(a.keys() | b.keys())
                 if a.get(k, "") != b.get(k, ""))


def _side(s: Session) -> SideInfo:
    return SideInfo(path=s.meta.origin_path, torch_version=s.meta.torch_version, device=s.meta.device,
                    mode=s.meta.mode)  # fmt: skip


def _call_ops(c: Compile) -> int:
    g = c.dynamo_graph
    return 0 if g is None else sum(1 for n in g.nodes if n.op.startswith("call_"))


def _totals(a: Session, b: Session) -> tuple[Change, ...]:
    def both(name: str, f: Callable[[Session], int | float | None]) -> Change:
        return Change(name, f(a), f(b))

    def counts(s: Session) -> tuple[int, int | None, int]:
        k = kernel_counts(o for c in s.compiles for o in c.inductor)
        return k.kernels, k.launches, k.extern_calls

    return (
        both("compiles", lambda s: len(s.compiles)),
        both("graphs", lambda s: sum(1 for c in s.compiles if c.dynamo_graph is not None)),
        both("graph breaks", lambda s: sum(len(c.graph_breaks) for c in s.compiles)),
        both("distinct breaks", lambda s: len(distinct_breaks(s, all_ranks=True))),
        both("recompiles", lambda s: sum(1 for c in s.compiles if c.recompile_reasons)),
        both("graph ops", lambda s: sum(_call_ops(c) for c in s.compiles)),
        both("guards", lambda s: sum(len(c.guards) for c in s.compiles)),
        both("saved tensors", lambda s: sum(len(c.aot.saved_tensors) for c in s.compiles if c.aot)),
        both("saved bytes", lambda s: sum(saved_bytes(c) for c in s.compiles)),
        both("recomputed ops", lambda s: sum(len(c.aot.recomputed) for c in s.compiles if c.aot)),
        both("kernels", lambda s: counts(s)[0]),
        both("kernel launches", lambda s: counts(s)[1]),
        both("extern calls", lambda s: counts(s)[2]),
        both("CUDA graphs captured", lambda s: sum(1 for c in s.compiles for o in c.inductor
                                                   if o.cudagraph is not None and o.cudagraph.captured)),
        # as the Overview counts it: the frame's compile and its backward's, compiled at first call
        both("compile s", lambda s: _sum(timed_total(c) for c in s.compiles)),
    )


def _sum(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _groups(a: Iterable[Compile], b: Iterable[Compile]) -> tuple[GroupMatch, ...]:
    counts: dict[tuple[int, int], list[int]] = {}
    for side, compiles in enumerate((a, b)):
        for c in compiles:
            counts.setdefault(group_of(c), [0, 0])[side] += 1
    return tuple(GroupMatch(None if r < 0 else r, run, n[0], n[1]) for (r, run), n in sorted(counts.items()))


def _lone(c: Compile) -> LoneCompile:
    return LoneCompile(
        compile_id=c.compile_id,
        frame=frame_key(c).shown(),
        rank=c.rank,
        run=c.run,
        nodes=_call_ops(c),
        breaks=tuple(b.reason for b in c.graph_breaks),
        recompile_reason=c.recompile_reasons[0].strip() if c.recompile_reasons else "",
        kernels=kernel_counts(c.inductor).kernels,
        compile_s=c.metrics.total_s,
    )


def _break_changes(a: Session, b: Session) -> tuple[tuple[BreakFact, ...], tuple[BreakFact, ...]]:
    rows_a = {break_identity(r.first): r for r in distinct_breaks(a, all_ranks=True)}
    rows_b = {break_identity(r.first): r for r in distinct_breaks(b, all_ranks=True)}
    return (tuple(break_fact(r.first, r.count) for k, r in rows_a.items() if k not in rows_b),
            tuple(break_fact(r.first, r.count) for k, r in rows_b.items() if k not in rows_a))  # fmt: skip


def _recompile_changes(a: Session, b: Session) -> tuple[tuple[RecompileFact, ...], tuple[RecompileFact, ...]]:
    def facts(s: Session) -> dict[tuple[str, str, str], RecompileFact]:
        return {(os.path.basename(r.file), r.function, r.guard):
                RecompileFact(r.in_words(), r.fix, r.file, r.line, r.function, r.count)
                for r in distinct_recompiles(s, all_ranks=True)}  # fmt: skip

    fa, fb = facts(a), facts(b)
    return (tuple(v for k, v in fa.items() if k not in fb), tuple(v for k, v in fb.items() if k not in fa))


def _stage_seconds(a: Iterable[Compile], b: Iterable[Compile]) -> tuple[Change, ...]:
    sums: list[dict[str, float]] = [{}, {}]
    for side, compiles in enumerate((a, b)):
        for c in compiles:
            for stage, s in c.metrics.stage_s.items():
                sums[side][stage] = sums[side].get(stage, 0.0) + s
    stages = [s for s in STAGES if s in sums[0] or s in sums[1]]
    stages += sorted((set(sums[0]) | set(sums[1])) - set(stages))
    return tuple(Change(s, sums[0].get(s), sums[1].get(s)) for s in stages)


def _kernel_times(s: Session) -> dict[str, float]:
    """µs per step by encoded kernel ref, from the profiled mode the session's graphs belong to
    (its own mode, else the first compiled mode profiled)."""
    profiled = [m for m in s.mode_stats if m.time_by_ref and m.mode != "eager"]
    own = [m for m in profiled if m.mode == s.meta.mode]
    chosen = own or profiled
    return dict(chosen[0].time_by_ref) if chosen else {}


def _modes(a: Iterable[ModeStats], b: Iterable[ModeStats]) -> tuple[ModeDiff, ...]:
    by_a = {m.mode: m for m in a}
    by_b = {m.mode: m for m in b}
    out = []
    for mode in list(by_a) + [m for m in by_b if m not in by_a]:
        ma, mb = by_a.get(mode), by_b.get(mode)
        out.append(mode_diff(mode, ma, mb))
    return tuple(out)


def mode_diff(mode: str, a: ModeStats | None, b: ModeStats | None) -> ModeDiff:
    """`change` is relative; it is beyond the noise when larger than both runs' spreads
    combined (root of the sum of squares, as independent relative errors combine)."""
    ms_a = a.median_ms if a else None
    ms_b = b.median_ms if b else None
    change = ms_b / ms_a - 1.0 if ms_a and ms_b is not None else None
    spreads = (a.spread if a else None, b.spread if b else None)
    noise = math.hypot(*spreads) if None not in spreads else None  # type: ignore[arg-type]
    beyond = abs(change) > noise if change is not None and noise is not None else None

    def pick(name: str, attr: str) -> Change:
        return Change(name, getattr(a, attr) if a else None, getattr(b, attr) if b else None)

    return ModeDiff(
        mode=mode,
        step_ms=Change("step ms", ms_a, ms_b),
        change=change,
        noise=noise,
        beyond_noise=beyond,
        compile_s=pick("compile s", "compile_s"),
        peak_mem_bytes=pick("peak memory bytes", "peak_mem_bytes"),
        launches_per_step=pick("launches per step", "kernel_launches_per_step"),
        cudagraph_graphs=pick("CUDA graphs", "cudagraph_graphs"),
        recompiles=pick("recompiles", "recompiles"),
    )
