"""Step-time statistics, computed one way for the CLI summary, the session and the pane.

Torch-free and Qt-free on purpose: the pane recomputes these figures while samples stream in,
and the worker computes them once at the end; both must agree to the last digit, so both call
this module. Warm-up steps (those that compiled or recorded a CUDA graph) are kept out of the
median and p99, which describe the steady state, but counted in the total, which is what the
user actually waited.

The median is taken over blocks: the run loop times blocks of `BLOCK` steps between two
synchronisations (timeline/step_clock.py), and a mode's median is the median over blocks of the mean
steady step in each block, which is what an independent "10 steps between two syncs" timing
measures. Per-step medians differ from it where a block's first step carries the restart after
the synchronisation, and read lower than an independent timing. p99 stays per step.

Speedups divide by the *paired* eager median when the run measured one: eager steps run
alternately with the mode's steps (`StepSample.baseline_for`), so both see the same host. On a
host-bound GPU loop the host's speed drifts within a minute (docs/benchmarks.md, "The host, not
the process, ..."), and an eager median taken a minute earlier would carry that drift into the
speedup.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from compiler_core.session.model import ModeStats, Session, StepSample, TimelineEvent

EAGER = "eager"
BLOCK = 10  # steps the run loop times between two synchronisations (timeline/step_clock.py)
COMPILE_KINDS = ("compile", "recompile")


def median(values: Sequence[float]) -> float | None:
    """The middle value (mean of the two middle ones for an even count); None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear-interpolated percentile (numpy's default method), `q` in [0, 100]."""
    if not values:
        return None
    ordered = sorted(values)
    pos = (len(ordered) - 1) * min(max(q, 0.0), 100.0) / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def steady_ms(samples: Iterable[StepSample]) -> list[float]:
    """Step times without warm-up steps; all of them when every step was a warm-up."""
    samples = list(samples)
    steady = [s.ms for s in samples if not s.warmup]
    return steady if steady else [s.ms for s in samples]


def speedup(eager_median_ms: float | None, mode_median_ms: float | None) -> float | None:
    """Eager median over this mode's median: 2.0 means twice as fast as eager."""
    if not eager_median_ms or not mode_median_ms:
        return None
    return eager_median_ms / mode_median_ms


def mode_stats(
    mode: str,
    samples: Sequence[StepSample],
    events: Sequence[TimelineEvent] = (),
    **measured: int | float | None,
) -> ModeStats:
    """Summarise one mode; `measured` passes figures only the run knows (kernel launches...).

    `compile_s` defaults to the summed durations of this mode's compile/recompile events.
    """
    mine = [s for s in samples if s.mode == mode and not s.baseline_for]
    paired = [s for s in samples if s.baseline_for == mode]
    return summarize(mode, [s.ms for s in mine], [s.warmup for s in mine],
                     [s.peak_mem_bytes for s in mine], events, baseline=[s.ms for s in paired],
                     steps=[s.step for s in mine],
                     baseline_steps=[(s.step, s.warmup) for s in paired], **measured)


def block_means(ms: Sequence[float], warmup: Sequence[bool], steps: Sequence[int]) -> list[float]:
    """Each block's (`step // BLOCK`) mean steady step; all steps count when every step was a
    warm-up."""
    blocks: dict[int, list[float]] = {}
    for v, w, st in zip(ms, warmup, steps, strict=True):
        if not w:
            blocks.setdefault(st // BLOCK, []).append(v)
    if not blocks:
        for v, st in zip(ms, steps, strict=True):
            blocks.setdefault(st // BLOCK, []).append(v)
    return [sum(b) / len(b) for b in blocks.values()]


def block_median(ms: Sequence[float], warmup: Sequence[bool], steps: Sequence[int]) -> float | None:
    """Median over blocks of each block's mean steady step (`block_means`)."""
    return median(block_means(ms, warmup, steps))


def relative_spread(values: Sequence[float]) -> float | None:
    """Half the interquartile range over the median (None under 2 values or a zero median)."""
    mid = median(values)
    if len(values) < 2 or not mid:
        return None
    q1, q3 = percentile(values, 25.0), percentile(values, 75.0)
    return None if q1 is None or q3 is None else (q3 - q1) / 2.0 / mid


def speedup_noise(stats: ModeStats) -> float | None:
    """The speedup's relative noise: its two medians' spreads combined (None when unknown)."""
    if stats.spread is None:
        return None
    return float((stats.spread ** 2 + (stats.baseline_spread or 0.0) ** 2) ** 0.5)


def untrustworthy(stats: ModeStats, speed: float | None) -> str:
    """Why a speedup is not to be trusted, in words ("" when its effect stands out of the noise):
    on a busy host a block strays further from the median than the speedup is from 1."""
    if speed is None or stats.mode == EAGER:
        return ""
    noise = speedup_noise(stats)
    if noise is None:
        return ("not trustworthy: one steady block of steps, so no spread to judge this speedup by; "
                "run more steps")
    effect = abs(speed - 1.0)
    if noise < effect:
        return ""
    return (f"not trustworthy: the step times scatter by ±{noise:.0%} (half the interquartile range of "
            f"the blocks), more than the {effect:.0%} this speedup reports; the host was busy or "
            f"the run too short")


def summarize(
    mode: str,
    ms: Sequence[float],
    warmup: Sequence[bool],
    peaks: Sequence[int | None] = (),
    events: Sequence[TimelineEvent] = (),
    baseline: Sequence[float] = (),
    steps: Sequence[int] | None = None,
    baseline_steps: Sequence[tuple[int, bool]] | None = None,
    **measured: int | float | None,
) -> ModeStats:
    """`mode_stats` on parallel columns, for callers (the live pane) that store samples so;
    `baseline` holds the step times of the eager steps paired with this mode's. With `steps`
    (and `baseline_steps`: (step, warm-up) per paired step) medians are block medians."""
    marks = [e for e in events if e.mode == mode]
    steady = [v for v, w in zip(ms, warmup, strict=True) if not w] or list(ms)
    blocks = block_means(ms, warmup, steps) if steps is not None else steady
    mid = median(blocks)
    if baseline_steps is not None:
        base_blocks = block_means(baseline, [w for _, w in baseline_steps], [st for st, _ in baseline_steps])
    else:
        base_blocks = list(baseline)
    base_mid = median(base_blocks)
    compile_durations = [e.duration_s for e in marks if e.kind in COMPILE_KINDS and e.duration_s]
    known_peaks = [p for p in peaks if p is not None]
    fields: dict[str, int | float | None] = {
        "compile_s": sum(compile_durations) if compile_durations else None,
        "peak_mem_bytes": max(known_peaks) if known_peaks else None,
        "baseline_ms": base_mid,
        "spread": relative_spread(blocks),
        "baseline_spread": relative_spread(base_blocks),
    }
    fields.update({k: v for k, v in measured.items() if v is not None})
    return ModeStats(
        mode=mode,
        samples=len(ms),
        median_ms=mid,
        p99_ms=percentile(steady, 99.0),
        total_ms=sum(ms) if ms else None,
        recompiles=sum(1 for e in marks if e.kind == "recompile"),
        **fields,  # type: ignore[arg-type]
    )


def all_mode_stats(samples: Sequence[StepSample], events: Sequence[TimelineEvent] = ()) -> list[ModeStats]:
    """One ModeStats per mode, in order of first appearance."""
    modes = list(dict.fromkeys(s.mode for s in samples if not s.baseline_for))
    return [mode_stats(m, samples, events) for m in modes]


def speedups(stats: Sequence[ModeStats]) -> dict[str, float | None]:
    """Speedup vs eager for every mode (eager itself is 1.0; None without any eager steps)."""
    eager = next((s for s in stats if s.mode == EAGER), None)
    base = eager.median_ms if eager else None
    return {s.mode: mode_speedup(s, base) for s in stats}


def mode_speedup(stats: ModeStats, eager_median_ms: float | None) -> float | None:
    """Against the paired eager steps when there were any, else against eager's own run."""
    return speedup(stats.baseline_ms or eager_median_ms, stats.median_ms)


def with_measured(live: ModeStats, measured: ModeStats | None) -> ModeStats:
    """What the app shows for a mode: step figures from the samples themselves (`live`), and
    what only the run measured (compile time, launches, kernels, CUDA graphs, profile) from
    its stored figures. A session saved by an older build stored medians taken another way;
    the GUI and `summary` both show these, so they never disagree."""
    if measured is None:
        return live
    m = measured
    return ModeStats(
        mode=live.mode, samples=live.samples, median_ms=live.median_ms, p99_ms=live.p99_ms,
        total_ms=live.total_ms, recompiles=live.recompiles,
        compile_s=m.compile_s if m.compile_s is not None else live.compile_s,
        peak_mem_bytes=m.peak_mem_bytes if m.peak_mem_bytes is not None else live.peak_mem_bytes,
        kernel_launches_per_step=m.kernel_launches_per_step, kernels=m.kernels,
        cudagraph_graphs=m.cudagraph_graphs, baseline_ms=live.baseline_ms,
        runtime=m.runtime, time_by_ref=m.time_by_ref, saved_bytes=m.saved_bytes,
        spread=live.spread, baseline_spread=live.baseline_spread,
    )


def shown_stats(session: Session) -> list[ModeStats]:
    """Every mode's figures as the app shows them (`with_measured`); the stored figures alone
    for a session saved without its steps."""
    if not session.timeline:
        return list(session.mode_stats)
    stored = {m.mode: m for m in session.mode_stats}
    return [with_measured(live, stored.get(live.mode)) for live in all_mode_stats(session.timeline,
                                                                                   session.timeline_events)]
