"""Who is slow: step-time skew across ranks, the slowest rank per step, compile-time skew.

A `run --nproc N` session times every compiled callable on every rank (modes `r0:Net`,
`r1:Net`, ...). In a synchronous job the others wait for the slowest rank at the next
collective, so a rank that is consistently slowest is a straggler, and its lag is the time the
whole job loses per step. Per callable and step the report takes each rank's time, the skew
(slowest minus fastest) and the slowest rank; per rank its median lag behind the others (its
time minus the median of the other ranks' in the same step) over the steady steps (warm-up
steps, which compile, are left out).

Durations name a straggler only where its wait falls outside the others' steps (gloo on CPU:
the slow rank's own step is longer). Where every rank's step lasts until its next call and the
ranks are coupled through their collectives (NCCL on GPUs: the waiting rank's kernels block
until the slow rank's collective arrives, a `.item()` holds the host), every rank's step lasts
as long as the slowest one's and durations cannot tell them apart. What still tells the
straggler is when each rank arrives: the ranks leave a collective together, the slow one spends
its extra time before its next call while the others call at once and wait inside it. So per
step each rank's arrival lag is its host start (`StepSample.start_ms`, a clock every rank of a
host shares) minus the earliest rank's, and a rank that arrives last at most steady steps, by
enough, is named as well; `Straggler.signal` says which of the two named it. Compile-time skew
is read from each rank's compile times: a rank still compiling while the others wait at a
collective.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field
from typing import Any

from compiler_core.session.model import Session

RANK_MODE = re.compile(r"^r(\d+):(.+)$")
MIN_STEPS = 3  # steady steps a straggler needs before it is named
SLOWEST_SHARE = 0.75  # ... in which it is the slowest rank at least this often
MIN_LAG_SHARE = 0.1  # ... by a median lag of at least this share of the others' median step
TOP_COMPILE_SKEWS = 5
MIN_LAG_MS = 1.0  # ... and at least this long: two ranks of equal work differ by noise below it


DURATION = "duration"  # Straggler.signal: its steps take longer than the others'
ARRIVAL = "arrival"  # ... it starts its steps later than the others, who wait for it


@dataclass(frozen=True)
class StepSkew:
    """One step of one callable: each rank's time, the skew, the slowest rank and, where every
    rank recorded its host start, each rank's arrival lag behind the earliest and the last one."""

    step: int
    ms_by_rank: dict[int, float]
    skew_ms: float
    slowest: int
    arrival_ms_by_rank: dict[int, float] = field(default_factory=dict)
    last: int | None = None


@dataclass(frozen=True)
class RankLag:
    """One rank on one callable: its median step, its median lag behind the other ranks (per
    step: its time minus the median of theirs), in how many steady steps it was the slowest;
    and, over the steps with host starts on every rank, its median arrival lag behind the
    earliest rank and in how many it arrived last (None and 0 without start times)."""

    rank: int
    median_ms: float
    median_lag_ms: float
    slowest_steps: int
    median_arrival_ms: float | None = None
    last_steps: int = 0


@dataclass(frozen=True)
class CallableSkew:
    label: str
    steps: tuple[StepSkew, ...] = ()
    lags: tuple[RankLag, ...] = ()

    @property
    def median_skew_ms(self) -> float | None:
        return statistics.median(s.skew_ms for s in self.steps) if self.steps else None

    @property
    def arrival_steps(self) -> int:
        """Steady steps whose host start every rank recorded: those arrival lags are read over."""
        return sum(1 for s in self.steps if s.last is not None)


@dataclass(frozen=True)
class Straggler:
    """A rank the others wait for on one callable, named by `signal`: `DURATION` (slowest in
    `slowest_share` of the steady steps, `median_lag_ms` longer than the others) or `ARRIVAL`
    (last to arrive in that share of them, `median_lag_ms` after the earliest rank)."""

    rank: int
    label: str
    slowest_share: float
    median_lag_ms: float
    median_step_ms: float  # the other ranks' median step: what the job would run at without it
    signal: str = DURATION
    last_steps: int = 0  # ARRIVAL: steps it arrived last at, of `steps`
    steps: int = 0

    def text(self) -> str:
        if self.signal == ARRIVAL:
            return (f"rank {self.rank} is the straggler on {self.label}: arrives last at {self.last_steps} "
                    f"of {self.steps} steady steps, {self.median_lag_ms:.2f} ms after the others (median): "
                    f"the others wait for it in their collectives (their median step: "
                    f"{self.median_step_ms:.2f} ms)")
        return (f"rank {self.rank} is the straggler on {self.label}: slowest in {self.slowest_share:.0%} of "
                f"steady steps, {self.median_lag_ms:.2f} ms behind the other ranks (their median step: "
                f"{self.median_step_ms:.2f} ms)")

    def as_dict(self) -> dict[str, Any]:
        return {"rank": self.rank, "callable": self.label, "signal": self.signal,
                "slowest_share": round(self.slowest_share, 3), "median_lag_ms": round(self.median_lag_ms, 3),
                "median_step_ms": round(self.median_step_ms, 3), "text": self.text()}  # fmt: skip


@dataclass(frozen=True)
class CompileSkew:
    """One compile id: the rank that took longest over it and by how much more than the
    quickest rank; the others wait that long at their next collective."""

    compile_id: str
    slowest: int
    slowest_s: float
    skew_s: float

    def as_dict(self) -> dict[str, Any]:
        return {"compile_id": self.compile_id, "slowest_rank": self.slowest,
                "slowest_s": round(self.slowest_s, 3), "skew_s": round(self.skew_s, 3)}  # fmt: skip


@dataclass(frozen=True)
class StragglerReport:
    callables: tuple[CallableSkew, ...] = ()
    compile_s: dict[int, float] = field(default_factory=dict)  # rank -> its compiles' seconds
    stragglers: tuple[Straggler, ...] = ()
    # the compile ids whose compile time differs most across the ranks that compiled them
    compile_skews: tuple[CompileSkew, ...] = ()

    @property
    def compile_skew_s(self) -> float | None:
        seconds = self.compile_s.values()
        return max(seconds) - min(seconds) if len(seconds) > 1 else None

    def as_dict(self) -> dict[str, Any]:
        slowest_compile = max(self.compile_s, key=lambda r: self.compile_s[r]) if self.compile_s else None
        return {
            "stragglers": [s.as_dict() for s in self.stragglers],
            "step_skew": {
                c.label: {"median_skew_ms": _round(c.median_skew_ms), "steps": len(c.steps),
                          "median_lag_ms": {str(lag.rank): round(lag.median_lag_ms, 3) for lag in c.lags},
                          "arrival_steps": c.arrival_steps,
                          "median_arrival_lag_ms": {str(lag.rank): _round(lag.median_arrival_ms)
                                                    for lag in c.lags},
                          "last_arrivals": {str(lag.rank): lag.last_steps for lag in c.lags}}
                for c in self.callables
            },
            "compile_s": {str(r): round(s, 3) for r, s in sorted(self.compile_s.items())},
            "compile_skew_s": _round(self.compile_skew_s),
            "slowest_compile_rank": slowest_compile,
            "compile_skews": [c.as_dict() for c in self.compile_skews],
        }  # fmt: skip


def rank_step_times(session: Session, steady: bool = True) -> dict[str, dict[int, dict[int, float]]]:
    """callable -> rank -> step -> ms, from the `rN:` modes of a multi-rank run (warm-up steps
    left out when `steady`)."""
    out: dict[str, dict[int, dict[int, float]]] = {}
    for s in session.timeline:
        m = RANK_MODE.match(s.mode)
        if m is None or s.baseline_for or (steady and s.warmup):
            continue
        out.setdefault(m.group(2), {}).setdefault(int(m.group(1)), {})[s.step] = s.ms
    return out


def rank_step_starts(session: Session) -> dict[str, dict[int, dict[int, float]]]:
    """callable -> rank -> step -> host start (ms since midnight UTC) of the steady steps that
    recorded one: when each rank arrived at the step."""
    out: dict[str, dict[int, dict[int, float]]] = {}
    for s in session.timeline:
        m = RANK_MODE.match(s.mode)
        if m is None or s.baseline_for or s.warmup or s.start_ms is None:
            continue
        out.setdefault(m.group(2), {}).setdefault(int(m.group(1)), {})[s.step] = s.start_ms
    return out


def straggler_report(session: Session) -> StragglerReport:
    starts = rank_step_starts(session)
    callables = tuple(_callable_skew(label, by_rank, starts.get(label, {}))
                      for label, by_rank in rank_step_times(session).items() if len(by_rank) > 1)  # fmt: skip
    compile_s: dict[int, float] = {}
    by_id: dict[str, dict[int, float]] = {}
    for c in session.compiles:
        if c.rank is not None:
            spent = (c.metrics.total_s or 0.0) + c.metrics.stage_s.get("backward", 0.0)
            compile_s[c.rank] = compile_s.get(c.rank, 0.0) + spent
            by_id.setdefault(c.compile_id, {})[c.rank] = spent
    named = tuple(s for c in callables if (s := _straggler(c)) is not None)
    return StragglerReport(callables, compile_s, named, _compile_skews(by_id))


def _compile_skews(by_id: dict[str, dict[int, float]]) -> tuple[CompileSkew, ...]:
    """The `TOP_COMPILE_SKEWS` compile ids with the largest spread across ranks (two ranks or
    more compiled them; a compile on one rank only is a divergence, said there)."""
    out = []
    for cid, seconds in by_id.items():
        if len(seconds) > 1:
            slowest = max(seconds, key=lambda r: seconds[r])
            out.append(CompileSkew(cid, slowest, seconds[slowest], seconds[slowest] - min(seconds.values())))
    out.sort(key=lambda s: -s.skew_s)
    return tuple(out[:TOP_COMPILE_SKEWS])


def _callable_skew(label: str, by_rank: dict[int, dict[int, float]],
                   starts: dict[int, dict[int, float]]) -> CallableSkew:
    steps = sorted(set.intersection(*(set(v) for v in by_rank.values())))
    skews: list[StepSkew] = []
    lags: dict[int, list[float]] = {r: [] for r in by_rank}
    arrivals: dict[int, list[float]] = {r: [] for r in by_rank}
    for step in steps:
        ms = {r: by_rank[r][step] for r in sorted(by_rank)}
        slowest = max(ms, key=lambda r: ms[r])
        arrived = _arrival_lags(starts, sorted(by_rank), step)
        last = max(arrived, key=lambda r: arrived[r]) if arrived else None
        skews.append(StepSkew(step, ms, max(ms.values()) - min(ms.values()), slowest, arrived, last))
        for r, v in ms.items():
            lags[r].append(v - statistics.median(o for q, o in ms.items() if q != r))
        for r, v in arrived.items():
            arrivals[r].append(v)
    rank_lags = tuple(
        RankLag(r, statistics.median(by_rank[r][s] for s in steps), statistics.median(lags[r]),
                sum(1 for s in skews if s.slowest == r),
                statistics.median(arrivals[r]) if arrivals[r] else None, sum(1 for s in skews if s.last == r))
        for r in sorted(by_rank) if lags[r]
    )  # fmt: skip
    return CallableSkew(label, tuple(skews), rank_lags)


def _arrival_lags(starts: dict[int, dict[int, float]], ranks: list[int], step: int) -> dict[int, float]:
    """rank -> its host start at `step` minus the earliest rank's; empty unless every rank
    recorded one (a missing rank could be the last to arrive)."""
    at = {r: starts.get(r, {}).get(step) for r in ranks}
    known = {r: v for r, v in at.items() if v is not None}
    if len(known) < len(ranks):
        return {}
    first = min(known.values())
    return {r: v - first for r, v in known.items()}


def _straggler(c: CallableSkew) -> Straggler | None:
    """The duration signal first (a rank whose own steps are longer); where the ranks' steps
    are coupled and durations agree, the arrival signal."""
    return _by_duration(c) or _by_arrival(c)


def _by_duration(c: CallableSkew) -> Straggler | None:
    if len(c.steps) < MIN_STEPS or not c.lags:
        return None
    worst = max(c.lags, key=lambda lag: (lag.slowest_steps, lag.median_lag_ms))
    share = worst.slowest_steps / len(c.steps)
    step_ms = _others_step_ms(c, worst.rank)
    if not _enough(share, worst.median_lag_ms, step_ms):
        return None
    return Straggler(worst.rank, c.label, share, worst.median_lag_ms, step_ms, DURATION,
                     steps=len(c.steps))  # fmt: skip


def _by_arrival(c: CallableSkew) -> Straggler | None:
    steps = c.arrival_steps
    if steps < MIN_STEPS or not c.lags:
        return None
    worst = max(c.lags, key=lambda lag: (lag.last_steps, lag.median_arrival_ms or 0.0))
    share = worst.last_steps / steps
    lag = worst.median_arrival_ms
    step_ms = _others_step_ms(c, worst.rank)
    if lag is None or not _enough(share, lag, step_ms):
        return None
    return Straggler(worst.rank, c.label, share, lag, step_ms, ARRIVAL, worst.last_steps, steps)


def _others_step_ms(c: CallableSkew, rank: int) -> float:
    return statistics.median(lag.median_ms for lag in c.lags if lag.rank != rank)


def _enough(share: float, lag_ms: float, step_ms: float) -> bool:
    """Often enough (`SLOWEST_SHARE`) and by enough: `MIN_LAG_MS` and `MIN_LAG_SHARE` of the
    others' median step, the same bar for either signal."""
    return share >= SLOWEST_SHARE and lag_ms >= MIN_LAG_MS and lag_ms >= MIN_LAG_SHARE * step_ms


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 3)
